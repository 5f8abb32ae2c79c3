import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ConfigError } from "../src/config/config-error.ts";
import { loadConfig, validateConfig } from "../src/config/config-file.ts";
import type { ExchangeConfig } from "../src/config/exchange-config.ts";
import {
  ledgerScale,
  MAX_LEDGER_VALUE,
  MIN_LEDGER_CAPACITY,
  rateDecimals,
} from "../src/config/ledger-bounds.ts";
import { DEFAULT_SETTINGS, parseSettings } from "../src/config/settings.ts";
import { chooseWaitStrategy, workerSpinFor } from "../src/pair/pair-client.ts";

describe("parseSettings", () => {
  it("uses the defaults when neither flags nor environment say anything", () => {
    const settings = parseSettings([], {});
    assert.deepEqual(settings, {
      host: "127.0.0.1",
      port: 8080,
      dbPath: "data/exchange.db",
      backupDir: "data/backups/",
      configPath: "data/config.json",
      rateLimit: 1000,
      adminToken: undefined,
      synchronous: "FULL",
      allowSlowUws: false,
      idleTimeoutSeconds: 120,
      maxBackpressureBytes: 1024 * 1024,
      waitStrategy: "auto",
      corsOrigins: [],
      clientIdWindow: 65536,
      clientIdFilterMb: 64,
      tlsCert: undefined,
      tlsKey: undefined,
      fixPort: undefined,
      fixCompId: "EXCHANGE",
      replicationPort: undefined,
      replication: "async",
      replicationKeep: 50_000,
      follow: undefined,
      replicationToken: undefined,
      logLevel: "info",
      warnings: [],
    });
    assert.equal(DEFAULT_SETTINGS.port, 8080);
  });

  it("reads every setting from the environment", () => {
    const settings = parseSettings([], {
      HOST: "0.0.0.0",
      PORT: "9000",
      DB_PATH: "/tmp/x.db",
      BACKUP_DIR: "/var/backups/exchange",
      EXCHANGE_CONFIG: "/etc/exchange.json",
      RATE_LIMIT: "0",
      ADMIN_TOKEN: "a-long-enough-admin-token",
      SQLITE_SYNCHRONOUS: "normal",
      ALLOW_SLOW_UWS: "1",
      STREAM_IDLE_TIMEOUT: "60",
      STREAM_MAX_BACKPRESSURE: "65536",
      WAIT_STRATEGY: "Busy-Spin",
      CORS_ORIGIN: "http://localhost:5173",
      EXCHANGE_CLIENT_ID_WINDOW: "10",
      EXCHANGE_CLIENT_ID_FILTER_MB: "16",
      TLS_CERT: "/etc/exchange/cert.pem",
      TLS_KEY: "/etc/exchange/key.pem",
      LOG_LEVEL: "Debug",
      FIX_PORT: "9878",
      FIX_COMP_ID: "VENUE",
    });
    assert.deepEqual(settings, {
      host: "0.0.0.0",
      port: 9000,
      dbPath: "/tmp/x.db",
      backupDir: "/var/backups/exchange",
      configPath: "/etc/exchange.json",
      rateLimit: 0,
      adminToken: "a-long-enough-admin-token",
      synchronous: "NORMAL",
      allowSlowUws: true,
      idleTimeoutSeconds: 60,
      maxBackpressureBytes: 65536,
      waitStrategy: "busy-spin",
      corsOrigins: ["http://localhost:5173"],
      clientIdWindow: 10,
      clientIdFilterMb: 16,
      tlsCert: "/etc/exchange/cert.pem",
      tlsKey: "/etc/exchange/key.pem",
      fixPort: 9878,
      fixCompId: "VENUE",
      replicationPort: undefined,
      replication: "async",
      replicationKeep: 50_000,
      follow: undefined,
      replicationToken: undefined,
      logLevel: "debug",
      warnings: [],
    });
  });

  it("reads --fix-port (0: any free port) and refuses a FIX CompID with spaces or SOH", () => {
    assert.equal(parseSettings(["--fix-port", "0"], { FIX_PORT: "9000" }).fixPort, 0);
    assert.throws(
      () => parseSettings(["--fix-port", "70000"], {}),
      (e: unknown) => e instanceof ConfigError && /--fix-port: "70000" is not an integer/.test(e.message),
    );
    assert.throws(
      () => parseSettings(["--fix-comp-id", "MY VENUE"], {}),
      (e: unknown) => e instanceof ConfigError && /--fix-comp-id: "MY VENUE" must be/.test(e.message),
    );
  });

  it("reads the replication settings and refuses a short token, a follow without one, and sync", () => {
    const token = "a-replication-token-1";
    const leader = parseSettings(["--replication-port", "0"], { REPLICATION_TOKEN: token });
    assert.equal(leader.replicationPort, 0);
    assert.equal(leader.replication, "async");
    assert.equal(leader.replicationToken, token);
    const follower = parseSettings(["--follow", "10.0.0.1:9500"], { REPLICATION_TOKEN: token });
    assert.deepEqual(follower.follow, { host: "10.0.0.1", port: 9500, tls: false });
    assert.deepEqual(parseSettings([], { FOLLOW: "tls://[::1]:9500", REPLICATION_TOKEN: token }).follow, {
      host: "::1",
      port: 9500,
      tls: true,
    });
    assert.throws(
      () => parseSettings([], { REPLICATION_TOKEN: "short" }),
      (e: unknown) => e instanceof ConfigError && /REPLICATION_TOKEN: must be 16/.test(e.message),
    );
    assert.throws(
      () => parseSettings(["--follow", "10.0.0.1:9500"], {}),
      (e: unknown) => e instanceof ConfigError && /needs REPLICATION_TOKEN/.test(e.message),
    );
    assert.throws(
      () => parseSettings(["--follow", "10.0.0.1"], { REPLICATION_TOKEN: token }),
      (e: unknown) => e instanceof ConfigError && /--follow: "10.0.0.1" is not HOST:PORT/.test(e.message),
    );
    assert.equal(parseSettings([], {}).replication, "async");
    assert.equal(parseSettings(["--replication", "sync"], {}).replication, "sync");
    assert.equal(parseSettings([], { REPLICATION: "sync" }).replication, "sync");
    assert.throws(
      () => parseSettings(["--replication", "semi"], {}),
      (e: unknown) =>
        e instanceof ConfigError &&
        /--replication: "semi" is not a replication mode: async or sync/.test(e.message),
    );
    assert.throws(
      () => parseSettings([], { REPLICATION: "SYNC" }),
      (e: unknown) =>
        e instanceof ConfigError && /REPLICATION: "SYNC" is not a replication mode/.test(e.message),
    );
    assert.equal(parseSettings(["--replication-keep", "64"], { REPLICATION_KEEP: "9" }).replicationKeep, 64);
    assert.equal(parseSettings([], { REPLICATION_KEEP: "9" }).replicationKeep, 9);
    assert.throws(
      () => parseSettings(["--replication-keep", "0"], {}),
      (e: unknown) =>
        e instanceof ConfigError &&
        /--replication-keep: "0" is not an integer from 1 to 100000000/.test(e.message),
    );
  });

  it("reads --log-level and refuses a level it does not have", () => {
    assert.equal(parseSettings(["--log-level", "warn"], { LOG_LEVEL: "debug" }).logLevel, "warn");
    assert.throws(
      () => parseSettings(["--log-level", "trace"], {}),
      (e: unknown) =>
        e instanceof ConfigError &&
        /--log-level: "trace" must be one of error, warn, info, debug/.test(e.message),
    );
  });

  it("refuses a TLS certificate without its key, and a key without its certificate", () => {
    assert.throws(
      () => parseSettings(["--tls-cert", "c.pem"], {}),
      (e: unknown) => e instanceof ConfigError && /--tls-cert: .*go together/.test(e.message),
    );
    assert.throws(
      () => parseSettings([], { TLS_KEY: "k.pem" }),
      (e: unknown) => e instanceof ConfigError && /TLS_KEY: .*go together/.test(e.message),
    );
  });

  it("lets a flag win over the environment, in both flag forms", () => {
    const env = {
      HOST: "0.0.0.0",
      PORT: "9000",
      DB_PATH: "env.db",
      BACKUP_DIR: "env-backups",
      EXCHANGE_CONFIG: "env.json",
      RATE_LIMIT: "5",
      SQLITE_SYNCHRONOUS: "NORMAL",
      STREAM_IDLE_TIMEOUT: "60",
      STREAM_MAX_BACKPRESSURE: "100",
    };
    const settings = parseSettings(
      [
        "--host",
        "localhost",
        "--port=9100",
        "--db",
        "flag.db",
        "--config=flag.json",
        "--backup-dir",
        "flag-backups",
        "--rate-limit",
        "7",
        "--synchronous=full",
        "--idle-timeout",
        "0",
        "--max-backpressure=200",
      ],
      env,
    );
    assert.equal(settings.host, "localhost");
    assert.equal(settings.port, 9100);
    assert.equal(settings.dbPath, "flag.db");
    assert.equal(settings.configPath, "flag.json");
    assert.equal(settings.backupDir, "flag-backups");
    assert.equal(settings.rateLimit, 7);
    assert.equal(settings.synchronous, "FULL");
    assert.equal(settings.idleTimeoutSeconds, 0);
    assert.equal(settings.maxBackpressureBytes, 200);
  });

  it("treats an empty environment variable as unset", () => {
    const settings = parseSettings([], { PORT: "", HOST: "", ADMIN_TOKEN: "", ALLOW_SLOW_UWS: "" });
    assert.equal(settings.port, 8080);
    assert.equal(settings.host, "127.0.0.1");
    assert.equal(settings.adminToken, undefined);
    assert.equal(settings.allowSlowUws, false);
  });

  it("accepts port 0 so tests can ask for a free port", () => {
    assert.equal(parseSettings(["--port", "0"], {}).port, 0);
  });

  it("turns the slow uWS fallback on by flag or environment", () => {
    assert.equal(parseSettings(["--allow-slow-uws"], {}).allowSlowUws, true);
    assert.equal(parseSettings(["--allow-slow-uws"], { ALLOW_SLOW_UWS: "0" }).allowSlowUws, true);
    assert.equal(parseSettings([], { ALLOW_SLOW_UWS: "true" }).allowSlowUws, true);
    assert.equal(parseSettings([], { ALLOW_SLOW_UWS: "no" }).allowSlowUws, false);
  });

  it("warns about a short admin token", () => {
    const settings = parseSettings([], { ADMIN_TOKEN: "short" });
    assert.equal(settings.adminToken, "short");
    assert.equal(settings.warnings.length, 1);
    assert.match(settings.warnings[0], /ADMIN_TOKEN is shorter than 16/);
  });

  const invalid: Array<[string, string[], NodeJS.ProcessEnv, RegExp]> = [
    [
      "a port that is not a number",
      ["--port", "http"],
      {},
      /--port: "http" is not an integer from 0 to 65535/,
    ],
    ["a port above 65535", [], { PORT: "70000" }, /PORT: "70000" is not an integer from 0 to 65535/],
    ["a negative port", ["--port=-1"], {}, /--port: "-1" is not an integer/],
    ["a fractional port", ["--port=80.5"], {}, /--port: "80.5" is not an integer/],
    ["a negative rate limit", [], { RATE_LIMIT: "-5" }, /RATE_LIMIT: "-5" is not an integer from 0/],
    ["an empty host flag", ["--host="], {}, /--host: must not be empty/],
    [
      "an unknown synchronous mode",
      [],
      { SQLITE_SYNCHRONOUS: "OFF" },
      /SQLITE_SYNCHRONOUS: "OFF" must be FULL or NORMAL/,
    ],
    ["a bad ALLOW_SLOW_UWS", [], { ALLOW_SLOW_UWS: "maybe" }, /ALLOW_SLOW_UWS: "maybe" must be/],
    [
      "an idle timeout uWS refuses",
      ["--idle-timeout", "4"],
      {},
      /--idle-timeout: 4 is not 0 \(off\) or from 8 to 900/,
    ],
    [
      "an idle timeout too long",
      [],
      { STREAM_IDLE_TIMEOUT: "3600" },
      /STREAM_IDLE_TIMEOUT: "3600" is not an integer from 0 to 900/,
    ],
    [
      "a zero backpressure bound",
      ["--max-backpressure=0"],
      {},
      /--max-backpressure: "0" is not an integer from 1/,
    ],
    [
      "an admin token with spaces",
      [],
      { ADMIN_TOKEN: "has a space inside" },
      /ADMIN_TOKEN: must be printable ASCII/,
    ],
    [
      "a client id filter under 4 MiB",
      ["--client-id-filter-mb", "1"],
      {},
      /--client-id-filter-mb: "1" is not an integer from 4 to 4096/,
    ],
    ["an unknown flag", ["--prot", "1"], {}, /command line: .*--prot/],
    ["a positional argument", ["serve"], {}, /command line: .*serve/],
    ["a value on a boolean flag", ["--allow-slow-uws=yes"], {}, /command line: .*allow-slow-uws/],
  ];
  for (const [what, argv, env, message] of invalid) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => parseSettings(argv, env),
        (error: unknown) => error instanceof ConfigError && message.test(error.message),
      );
    });
  }
});

// ---- config file ----------------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), "exchange-config-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;
function writeConfig(content: unknown): string {
  const path = join(dir, `config-${fileCounter++}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const CONTRACT_EXAMPLE = {
  pairs: [
    {
      name: "btc_usdt",
      priceDecimals: 2,
      amountDecimals: 6,
      minAmount: "0.000001",
      maxAmount: "10000",
      maxPrice: "10000000",
    },
  ],
  users: [
    {
      uid: "0b7e4c1e-6a51-4c0e-9b0a-6f3f2d1c9a10",
      apiToken: "5f2b9c0e4a7d8e1f3a6b9c2d5e8f1a4b",
      secretKey: "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a",
      balances: { btc: "10", usdt: "100000" },
    },
  ],
};

type Json = Record<string, unknown>;
function pair(overrides: Json = {}): Json {
  return {
    name: "eth_usdt",
    priceDecimals: 2,
    amountDecimals: 5,
    minAmount: "0.00001",
    maxAmount: "100000",
    maxPrice: "1000000",
    ...overrides,
  };
}
/** A pair whose quote currency (usdt) gets the finest ledger scale, 22 decimals. */
const FINEST = pair({
  priceDecimals: 8,
  amountDecimals: 8,
  minAmount: "0.00000001",
  maxAmount: "9999999",
  maxPrice: "9999999",
  takerFee: "0.000001",
});
function user(overrides: Json = {}): Json {
  return {
    uid: "11111111-2222-4333-8444-555555555555",
    apiToken: "token-0001",
    secretKey: "secret-0001",
    balances: {},
    ...overrides,
  };
}

describe("loadConfig", () => {
  it("loads the shipped config: three pairs sharing currencies, no users", () => {
    const config: ExchangeConfig = loadConfig("data/config.json");
    assert.deepEqual(
      config.pairs.map((p) => p.name),
      ["btc_usdt", "eth_usdt", "eth_btc"],
    );
    assert.deepEqual(
      [...config.currencies.values()],
      [
        { name: "btc", scale: 10 },
        { name: "usdt", scale: 8 },
        { name: "eth", scale: 5 },
      ],
    );
    assert.deepEqual(config.users, []);
    const btcUsdt = config.pairsByName.get("btc_usdt")!;
    assert.deepEqual(btcUsdt, {
      name: "btc_usdt",
      base: "btc",
      quote: "usdt",
      priceDecimals: 2,
      amountDecimals: 6,
      minAmount: 1n,
      maxAmount: 10_000_000_000n,
      maxPrice: 1_000_000_000n,
      minNotional: 0n,
      index: 0,
      baseLedgerFactor: 10_000n, // lots at 10^-6 -> btc ledger at 10^-10
      quoteLedgerFactor: 1n, // ticks × lots at 10^-8 = usdt ledger scale
      makerFee: 0n,
      takerFee: 0n,
      feeDecimals: 0,
    });
    const ethBtc = config.pairsByName.get("eth_btc")!;
    assert.equal(ethBtc.index, 2);
    assert.equal(ethBtc.maxPrice, 100_000_000n);
    assert.equal(ethBtc.baseLedgerFactor, 10n); // eth: 4 -> 5 decimals
    assert.equal(ethBtc.quoteLedgerFactor, 1n); // btc: 6 + 4 = 10 decimals
    assert.equal(config.pairsByName.get("eth_usdt")!.quoteLedgerFactor, 10n); // 2 + 5 -> 8
  });

  it("loads the contract's example and credits balances at the ledger scale", () => {
    const config = loadConfig(writeConfig(CONTRACT_EXAMPLE));
    assert.equal(config.currencies.get("btc")!.scale, 6);
    assert.equal(config.currencies.get("usdt")!.scale, 8);
    assert.equal(config.users.length, 1);
    const [u] = config.users;
    assert.equal(u.uid, "0b7e4c1e-6a51-4c0e-9b0a-6f3f2d1c9a10");
    assert.equal(u.apiToken, "5f2b9c0e4a7d8e1f3a6b9c2d5e8f1a4b");
    assert.equal(u.secretKey, "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a");
    assert.deepEqual(
      [...u.balances],
      [
        ["btc", 10_000_000n],
        ["usdt", 10_000_000_000_000n],
      ],
    );
  });

  it("normalises a UUID to lowercase and accepts zero balances and missing balances", () => {
    const config = validateConfig({
      pairs: [pair()],
      users: [
        user({ uid: "ABCDEF01-2222-4333-8444-555555555555", balances: { eth: "0", usdt: "0.5" } }),
        user({ uid: "abcdef01-2222-4333-8444-555555555556", apiToken: "token-0002", balances: undefined }),
      ],
    });
    assert.equal(config.users[0].uid, "abcdef01-2222-4333-8444-555555555555");
    assert.deepEqual(
      [...config.users[0].balances],
      [
        ["eth", 0n],
        ["usdt", 5_000_000n], // usdt ledger scale 2 + 5 = 7
      ],
    );
    assert.equal(config.users[1].balances.size, 0);
  });

  it("bounds ledger values by a signed 128-bit integer, 10^12 whole units at the finest scale", () => {
    assert.equal(MAX_LEDGER_VALUE, 2n ** 127n - 1n);
    // The finest scale a config can give a currency: 8 price and 8 amount decimals, 6 fee decimals.
    assert.ok(MIN_LEDGER_CAPACITY * 10n ** 22n <= MAX_LEDGER_VALUE);
  });

  it("accepts 10^12 whole units and more of a currency at a scale of 22 decimals", () => {
    const config = validateConfig({
      pairs: [
        pair({
          priceDecimals: 8,
          amountDecimals: 8,
          minAmount: "0.00000001",
          maxAmount: "9999999",
          maxPrice: "9999999",
          makerFee: "0.000125",
        }),
      ],
      users: [user({ balances: { usdt: "17014118346046923.1731687303715884105727", eth: "1000000000000" } })],
    });
    assert.equal(config.currencies.get("usdt")!.scale, 22);
    assert.equal(config.currencies.get("eth")!.scale, 14);
    assert.equal(config.users[0].balances.get("usdt"), MAX_LEDGER_VALUE);
    assert.equal(config.users[0].balances.get("eth"), 10n ** 26n);
  });

  it("accepts a config without users", () => {
    assert.deepEqual(validateConfig({ pairs: [pair()] }).users, []);
  });

  it("computes each currency's ledger scale from every pair it appears in", () => {
    const pairs = [
      { base: "btc", quote: "usdt", priceDecimals: 2, amountDecimals: 6 },
      { base: "eth", quote: "btc", priceDecimals: 6, amountDecimals: 4 },
      { base: "eth", quote: "usdt", priceDecimals: 3, amountDecimals: 8 },
    ];
    assert.equal(ledgerScale(pairs, "btc"), 10);
    assert.equal(ledgerScale(pairs, "eth"), 8);
    assert.equal(ledgerScale(pairs, "usdt"), 11);
    assert.equal(ledgerScale(pairs, "doge"), 0);
  });

  it("reads minNotional exactly at the scale of price × amount, 0 when absent or zero (docs/API.md 20.5)", () => {
    const config = validateConfig({
      pairs: [
        pair({ minNotional: "10.5" }),
        pair({ name: "btc_usdt", priceDecimals: 2, amountDecimals: 6, minNotional: "0.00000001" }),
        pair({ name: "eth_btc", minNotional: "0" }),
        pair({ name: "doge_btc" }),
      ],
    });
    const at = (name: string) => config.pairsByName.get(name)!.minNotional;
    assert.deepEqual(
      [at("eth_usdt"), at("btc_usdt"), at("eth_btc"), at("doge_btc")],
      [105_000_000n, 1n, 0n, 0n], // eth_usdt: 7 decimals (2 + 5); btc_usdt: 8
    );
    for (const [value, message] of [
      ["0.000000001", /minNotional "0.000000001" .*7/],
      ["-1", /minNotional "-1"/],
      ["ten", /minNotional "ten"/],
      [10, /minNotional must be a decimal string/],
    ] as const) {
      assert.throws(
        () => validateConfig({ pairs: [pair({ minNotional: value })] }),
        (e: unknown) => e instanceof ConfigError && message.test(e.message),
        String(value),
      );
    }
  });

  it("reads fee rates and grows both currencies' scales by the decimals the rates need", () => {
    const config = validateConfig({
      pairs: [
        pair({ makerFee: "0.001", takerFee: "0.0025" }),
        pair({ name: "btc_usdt", priceDecimals: 2, amountDecimals: 6, maxAmount: "100" }),
        pair({ name: "doge_btc", priceDecimals: 8, amountDecimals: 0, minAmount: "1", maxAmount: "1000" }),
      ],
    });
    const eth = config.pairsByName.get("eth_usdt")!;
    assert.deepEqual([eth.makerFee, eth.takerFee, eth.feeDecimals], [1_000n, 2_500n, 4]);
    const btc = config.pairsByName.get("btc_usdt")!;
    assert.deepEqual([btc.makerFee, btc.takerFee, btc.feeDecimals], [0n, 0n, 0]);
    assert.equal(config.currencies.get("eth")!.scale, 5 + 4);
    assert.equal(config.currencies.get("usdt")!.scale, 8 + 4, "usdt is in eth_usdt, which has fees");
    assert.equal(config.currencies.get("btc")!.scale, 8, "btc's pairs have no fees: unchanged");
    assert.equal(btc.quoteLedgerFactor, 10_000n);
    assert.equal(rateDecimals(100_000n), 1);
    assert.equal(rateDecimals(1n), 6);
    assert.equal(rateDecimals(0n), 0);
  });

  it("accepts the largest exact bounds: 15 digits of price and of amount", () => {
    const config = validateConfig({
      pairs: [
        pair({
          priceDecimals: 8,
          amountDecimals: 8,
          maxPrice: "9999999.99999999",
          maxAmount: "9999999.99999999",
        }),
      ],
    });
    assert.equal(config.pairs[0].maxPrice, 999_999_999_999_999n);
  });

  it("refuses a file that does not exist or is not JSON", () => {
    assert.throws(() => loadConfig(join(dir, "missing.json")), /config .*missing\.json: cannot read/);
    assert.throws(() => loadConfig(writeConfig("{ pairs: [")), /config .*: not valid JSON/);
  });

  const invalid: Array<[string, unknown, RegExp]> = [
    ["a top level that is not an object", [], /top level: must be a JSON object/],
    ["an unknown top-level key", { pairs: [pair()], extra: 1 }, /top level: unknown key "extra"/],
    ["a missing pair list", {}, /pairs: must be a non-empty array/],
    ["an empty pair list", { pairs: [] }, /pairs: must be a non-empty array/],
    ["a pair that is not an object", { pairs: ["btc_usdt"] }, /pairs\[0\]: must be an object/],
    ["an uppercase pair name", { pairs: [pair({ name: "BTC_USDT" })] }, /pairs\[0\]: name must match/],
    ["a pair name without a quote", { pairs: [pair({ name: "btc" })] }, /pairs\[0\]: name must match/],
    ["a pair name with three parts", { pairs: [pair({ name: "a_b_c" })] }, /pairs\[0\]: name must match/],
    [
      "the same currency on both sides",
      { pairs: [pair({ name: "btc_btc" })] },
      /pairs\[0\] \(btc_btc\): base and quote currency must differ/,
    ],
    ["a duplicate pair name", { pairs: [pair(), pair()] }, /pairs\[1\] \(eth_usdt\): duplicate pair name/],
    [
      "an unknown pair key",
      { pairs: [pair({ amountDecimal: 5 })] },
      /pairs\[0\] \(eth_usdt\): unknown key "amountDecimal"/,
    ],
    [
      "fractional priceDecimals",
      { pairs: [pair({ priceDecimals: 1.5 })] },
      /priceDecimals must be an integer from 0 to 8/,
    ],
    [
      "amountDecimals above 8",
      { pairs: [pair({ amountDecimals: 9 })] },
      /amountDecimals must be an integer from 0 to 8/,
    ],
    [
      "negative amountDecimals",
      { pairs: [pair({ amountDecimals: -1 })] },
      /amountDecimals must be an integer from 0 to 8/,
    ],
    [
      "decimals given as a string",
      { pairs: [pair({ priceDecimals: "2" })] },
      /priceDecimals must be an integer/,
    ],
    [
      "a minAmount given as a number",
      { pairs: [pair({ minAmount: 0.001 })] },
      /minAmount must be a decimal string/,
    ],
    ["a missing maxPrice", { pairs: [pair({ maxPrice: undefined })] }, /maxPrice must be a decimal string/],
    [
      "a malformed maxAmount",
      { pairs: [pair({ maxAmount: "1e5" })] },
      /maxAmount "1e5" is not a plain decimal string/,
    ],
    ["a zero minAmount", { pairs: [pair({ minAmount: "0" })] }, /minAmount "0" must be greater than zero/],
    ["a negative maxPrice", { pairs: [pair({ maxPrice: "-1" })] }, /maxPrice "-1" must not be negative/],
    [
      "a minAmount finer than amountDecimals",
      { pairs: [pair({ minAmount: "0.000001" })] },
      /minAmount "0.000001" has more than 5 decimals/,
    ],
    [
      "a maxPrice finer than priceDecimals",
      { pairs: [pair({ maxPrice: "10.001" })] },
      /maxPrice "10.001" has more than 2 decimals/,
    ],
    [
      "minAmount above maxAmount",
      { pairs: [pair({ minAmount: "2", maxAmount: "1" })] },
      /minAmount must not be greater than maxAmount/,
    ],
    [
      "a maxPrice with more than 15 digits in all",
      { pairs: [pair({ priceDecimals: 8, maxPrice: "10000000" })] },
      /maxPrice has 8 integer digits and priceDecimals is 8; together they must not exceed 15/,
    ],
    [
      "a maxAmount with more than 15 digits in all",
      { pairs: [pair({ maxAmount: "10000000000" })] },
      /maxAmount has 11 integer digits and amountDecimals is 5; together they must not exceed 15/,
    ],
    [
      "an order value (maxPrice × maxAmount) that overflows the ledger at its quote currency's scale",
      {
        pairs: [
          pair({
            name: "eth_btc",
            priceDecimals: 0,
            amountDecimals: 0,
            minAmount: "1",
            maxAmount: "999999999999999",
            maxPrice: "999999999999999",
          }),
          pair({
            name: "usdt_btc",
            priceDecimals: 8,
            amountDecimals: 8,
            maxPrice: "1",
            minAmount: "1",
            maxAmount: "1",
          }),
        ],
      },
      /pairs\[0\] \(eth_btc\): maxPrice × maxAmount does not fit a 128-bit ledger value at the btc scale of 16 decimals/,
    ],
    ["users that are not an array", { pairs: [pair()], users: {} }, /users: must be an array/],
    ["a user that is not an object", { pairs: [pair()], users: [1] }, /users\[0\]: must be an object/],
    [
      "a uid that is not a UUID",
      { pairs: [pair()], users: [user({ uid: "user-1" })] },
      /users\[0\]: uid must be a UUID/,
    ],
    [
      "a duplicate uid, whatever its case",
      {
        pairs: [pair()],
        users: [
          user(),
          user({ uid: "11111111-2222-4333-8444-555555555555".toUpperCase(), apiToken: "token-0002" }),
        ],
      },
      /users\[1\] \(11111111-2222-4333-8444-555555555555\): duplicate uid/,
    ],
    ["an unknown user key", { pairs: [pair()], users: [user({ balance: {} })] }, /unknown key "balance"/],
    [
      "a short apiToken",
      { pairs: [pair()], users: [user({ apiToken: "short" })] },
      /apiToken must be printable ASCII, 8 to 128/,
    ],
    [
      "a long apiToken",
      { pairs: [pair()], users: [user({ apiToken: "x".repeat(129) })] },
      /apiToken must be printable ASCII/,
    ],
    [
      "a non-ASCII apiToken",
      { pairs: [pair()], users: [user({ apiToken: "токен-00001" })] },
      /apiToken must be printable ASCII/,
    ],
    [
      "an apiToken with a control character",
      { pairs: [pair()], users: [user({ apiToken: "token\t0001" })] },
      /apiToken must be printable ASCII/,
    ],
    [
      "an apiToken with a leading space",
      { pairs: [pair()], users: [user({ apiToken: " token-0001" })] },
      /must not start or end with a space/,
    ],
    [
      "an apiToken starting with Bearer",
      { pairs: [pair()], users: [user({ apiToken: "Bearer abcdef" })] },
      /nor start with "Bearer "/,
    ],
    [
      "an apiToken used twice",
      { pairs: [pair()], users: [user(), user({ uid: "11111111-2222-4333-8444-555555555556" })] },
      /users\[1\] .*apiToken is already used by another user/,
    ],
    [
      "a missing secretKey",
      { pairs: [pair()], users: [user({ secretKey: undefined })] },
      /secretKey must be printable ASCII, 8 to 128/,
    ],
    [
      "balances that are not an object",
      { pairs: [pair()], users: [user({ balances: [] })] },
      /balances must be an object/,
    ],
    [
      "a balance in an unknown currency",
      { pairs: [pair()], users: [user({ balances: { btc: "1" } })] },
      /balances: unknown currency "btc" \(configured: eth, usdt\)/,
    ],
    [
      "a balance in an uppercase currency",
      { pairs: [pair()], users: [user({ balances: { ETH: "1" } })] },
      /unknown currency "ETH"/,
    ],
    [
      "a balance given as a number",
      { pairs: [pair()], users: [user({ balances: { eth: 1 } })] },
      /balances.eth must be a decimal string/,
    ],
    [
      "a negative balance",
      { pairs: [pair()], users: [user({ balances: { eth: "-1" } })] },
      /balances.eth "-1" must not be negative/,
    ],
    [
      "a fee above 0.1",
      { pairs: [pair({ takerFee: "0.100001" })] },
      /takerFee "0.100001" must be from 0 to 0.1/,
    ],
    ["a negative fee", { pairs: [pair({ makerFee: "-0.001" })] }, /makerFee "-0.001" must not be negative/],
    [
      "a fee with more than 6 decimals",
      { pairs: [pair({ makerFee: "0.0000001" })] },
      /makerFee "0.0000001" has more than 6 decimals/,
    ],
    ["a fee given as a number", { pairs: [pair({ makerFee: 0.001 })] }, /makerFee must be a decimal string/],
    [
      "fees whose decimals overflow the ledger",
      {
        pairs: [
          pair({
            name: "eth_btc",
            priceDecimals: 0,
            amountDecimals: 0,
            minAmount: "1",
            maxAmount: "999999999999999",
            maxPrice: "999999999999999",
          }),
          pair({
            name: "usdt_btc",
            priceDecimals: 4,
            amountDecimals: 4,
            maxPrice: "1",
            minAmount: "1",
            maxAmount: "1",
            makerFee: "0.000001",
          }),
        ],
      },
      /maxPrice × maxAmount does not fit a 128-bit ledger value at the btc scale of 14 decimals/,
    ],
    [
      "a config user with the fee account's uid",
      { pairs: [pair()], users: [user({ uid: "00000000-0000-0000-0000-000000000000" })] },
      /this uid is the fee account/,
    ],
    [
      "a balance finer than the ledger scale",
      { pairs: [pair()], users: [user({ balances: { eth: "0.000001" } })] },
      /balances.eth "0.000001" has more than 5 decimals/,
    ],
    [
      "a balance that overflows the ledger",
      { pairs: [FINEST], users: [user({ balances: { usdt: "17014118346046923.1731687303715884105728" } })] },
      /balances.usdt is too large: the config users' balances of usdt may sum to at most 17014118346046923\.1731687303715884105727/,
    ],
    [
      "config users' balances that together overflow the ledger",
      {
        pairs: [FINEST],
        users: [
          user({ balances: { usdt: "10000000000000000" } }),
          user({
            uid: "11111111-2222-4333-8444-555555555556",
            apiToken: "token-0002",
            balances: { usdt: "7014118346046923.1731687303715884105728" },
          }),
        ],
      },
      /users\[1\] \(11111111-2222-4333-8444-555555555556\): balances.usdt is too large/,
    ],
  ];
  for (const [what, config, message] of invalid) {
    it(`refuses ${what}`, () => {
      assert.throws(
        () => loadConfig(writeConfig(config)),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^config .*config-\d+\.json: /.test(error.message) &&
          message.test(error.message),
      );
    });
  }
});

describe("wait strategy", () => {
  it("takes --wait-strategy over WAIT_STRATEGY and refuses anything else", () => {
    assert.equal(
      parseSettings(["--wait-strategy", "blocking"], { WAIT_STRATEGY: "busy-spin" }).waitStrategy,
      "blocking",
    );
    assert.throws(() => parseSettings(["--wait-strategy=spin"], {}), /must be auto, blocking or busy-spin/);
  });

  it("spins only when every pair worker and the main, writer and checkpointer threads get a core", () => {
    assert.equal(chooseWaitStrategy("auto", 2, 3), "blocking");
    assert.equal(chooseWaitStrategy("auto", 5, 3), "blocking");
    assert.equal(chooseWaitStrategy("auto", 6, 3), "busy-spin");
    assert.equal(chooseWaitStrategy("blocking", 64, 3), "blocking");
    assert.equal(chooseWaitStrategy("busy-spin", 2, 3), "busy-spin");
    assert.equal(workerSpinFor("busy-spin"), Number.POSITIVE_INFINITY);
    assert.ok(Number.isFinite(workerSpinFor("blocking")));
  });
});
