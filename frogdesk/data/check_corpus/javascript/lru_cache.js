// A small least-recently-used cache with size accounting and an eviction hook.
"use strict";

class LruCache {
  constructor({ maxEntries = 100, maxBytes = Infinity, onEvict = null } = {}) {
    if (!Number.isInteger(maxEntries) || maxEntries <= 0) {
      throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`);
    }
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.onEvict = onEvict;
    this.map = new Map();
    this.bytes = 0;
  }

  static sizeOf(value) {
    if (typeof value === "string") return value.length * 2;
    if (value instanceof Uint8Array) return value.byteLength;
    return JSON.stringify(value ?? null).length * 2;
  }

  get(key) {
    if (!this.map.has(key)) return undefined;
    const entry = this.map.get(key);
    // Re-insert so the key becomes the most recently used one.
    this.map.delete(key);
    this.map.set(key, entry);
    entry.hits += 1;
    return entry.value;
  }

  set(key, value) {
    const size = LruCache.sizeOf(value);
    if (size > this.maxBytes) {
      return false;
    }
    if (this.map.has(key)) {
      this.bytes -= this.map.get(key).size;
      this.map.delete(key);
    }
    this.map.set(key, { value, size, hits: 0 });
    this.bytes += size;
    this.#shrink();
    return true;
  }

  delete(key) {
    const entry = this.map.get(key);
    if (!entry) return false;
    this.map.delete(key);
    this.bytes -= entry.size;
    return true;
  }

  #shrink() {
    while (this.map.size > this.maxEntries || this.bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.map.entries().next().value;
      this.map.delete(oldestKey);
      this.bytes -= oldest.size;
      if (typeof this.onEvict === "function") {
        this.onEvict(oldestKey, oldest.value);
      }
    }
  }

  stats() {
    let hits = 0;
    for (const entry of this.map.values()) hits += entry.hits;
    return { entries: this.map.size, bytes: this.bytes, hits };
  }
}

function memoize(fn, options) {
  const cache = new LruCache(options);
  return function memoized(...args) {
    const key = JSON.stringify(args);
    const cached = cache.get(key);
    if (cached !== undefined) return cached;
    const result = fn.apply(this, args);
    cache.set(key, result);
    return result;
  };
}

async function fetchWithRetry(url, { retries = 3, delayMs = 200, fetchImpl = fetch } = {}) {
  let lastError = null;
  for (let attempt = 0; attempt <= retries; attempt += 1) {
    try {
      const response = await fetchImpl(url);
      if (response.status >= 500) {
        throw new Error(`server error ${response.status} for ${url}`);
      }
      return response;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, delayMs * 2 ** attempt));
    }
  }
  throw lastError;
}

module.exports = { LruCache, memoize, fetchWithRetry };
