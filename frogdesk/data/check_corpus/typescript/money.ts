// Exact money arithmetic in integer minor units, with formatting and allocation.

export type Currency = "EUR" | "USD" | "JPY";

const MINOR_DIGITS: Record<Currency, number> = { EUR: 2, USD: 2, JPY: 0 };

export class Money {
  private constructor(readonly minor: bigint, readonly currency: Currency) {}

  static of(amount: string, currency: Currency): Money {
    const digits = MINOR_DIGITS[currency];
    const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(amount.trim());
    if (!match) {
      throw new Error(`not an amount: ${amount}`);
    }
    const [, sign, whole, fraction = ""] = match;
    if (fraction.length > digits) {
      throw new Error(`${currency} has ${digits} minor digits, got ${fraction.length}`);
    }
    const minor = BigInt(whole + fraction.padEnd(digits, "0"));
    return new Money(sign ? -minor : minor, currency);
  }

  add(other: Money): Money {
    this.assertSame(other);
    return new Money(this.minor + other.minor, this.currency);
  }

  subtract(other: Money): Money {
    this.assertSame(other);
    return new Money(this.minor - other.minor, this.currency);
  }

  /** Split into parts proportional to the ratios; the remainder goes to the first parts. */
  allocate(ratios: number[]): Money[] {
    const total = ratios.reduce((sum, ratio) => sum + ratio, 0);
    if (total <= 0) {
      throw new Error("ratios must add up to more than zero");
    }
    const parts = ratios.map(
      (ratio) => (this.minor * BigInt(Math.round(ratio * 1000))) / BigInt(Math.round(total * 1000)),
    );
    let remainder = this.minor - parts.reduce((sum, part) => sum + part, 0n);
    for (let i = 0; remainder > 0n; i = (i + 1) % parts.length) {
      parts[i] += 1n;
      remainder -= 1n;
    }
    return parts.map((minor) => new Money(minor, this.currency));
  }

  format(locale = "en-US"): string {
    const digits = MINOR_DIGITS[this.currency];
    const value = Number(this.minor) / 10 ** digits;
    return new Intl.NumberFormat(locale, { style: "currency", currency: this.currency }).format(value);
  }

  private assertSame(other: Money): void {
    if (other.currency !== this.currency) {
      throw new Error(`cannot mix ${this.currency} and ${other.currency}`);
    }
  }
}
