// Parses command-line flags into an options object, with defaults and helpful errors.
"use strict";

const SPEC = {
  port: { type: "number", default: 8080, help: "port to listen on" },
  host: { type: "string", default: "127.0.0.1", help: "address to bind" },
  verbose: { type: "boolean", default: false, help: "print every request" },
  root: { type: "string", default: ".", help: "directory to serve" },
};

function parseArgs(argv, spec = SPEC) {
  const options = {};
  const positional = [];
  for (const [name, rule] of Object.entries(spec)) {
    options[name] = rule.default;
  }
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    let [name, value] = arg.slice(2).split("=", 2);
    const rule = spec[name];
    if (!rule) {
      throw new Error(`unknown option --${name}; known: ${Object.keys(spec).join(", ")}`);
    }
    if (rule.type === "boolean") {
      options[name] = value === undefined ? true : value !== "false";
      continue;
    }
    if (value === undefined) {
      value = argv[i + 1];
      i += 1;
    }
    if (value === undefined) {
      throw new Error(`--${name} needs a value`);
    }
    if (rule.type === "number") {
      const parsed = Number(value);
      if (Number.isNaN(parsed)) {
        throw new Error(`--${name} must be a number, got "${value}"`);
      }
      options[name] = parsed;
    } else {
      options[name] = value;
    }
  }
  return { options, positional };
}

function usage(spec = SPEC) {
  const lines = ["usage: serve [options] [files...]", ""];
  const width = Math.max(...Object.keys(spec).map((name) => name.length)) + 4;
  for (const [name, rule] of Object.entries(spec)) {
    lines.push(`  --${name.padEnd(width)}${rule.help} (default: ${rule.default})`);
  }
  return lines.join("\n");
}

if (require.main === module) {
  try {
    const { options, positional } = parseArgs(process.argv.slice(2));
    console.log(JSON.stringify({ options, positional }, null, 2));
  } catch (error) {
    console.error(error.message);
    console.error(usage());
    process.exitCode = 2;
  }
}

module.exports = { parseArgs, usage };
