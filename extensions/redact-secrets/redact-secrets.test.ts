import { describe, expect, it } from "vitest";
import { loadFake } from "../../test/helpers/fake-pi.ts";
import redactSecrets, { redactDeep, redactText } from "./index.ts";

const OPENAI = ["sk", "proj", "Abc123def456ghi789jkl012mno345"].join("-");
const GITHUB = `ghp_${"a1B2".repeat(9)}`;

describe("redactText", () => {
  it("replaces each kind of secret and keeps the text around it", () => {
    const cases: [string, string][] = [
      [`OPENAI_API_KEY=${OPENAI}`, "OPENAI_API_KEY=[REDACTED:openai-key]"],
      [`export GITHUB_TOKEN=${GITHUB}`, "export GITHUB_TOKEN=[REDACTED:github-token]"],
      ["postgres://admin:s3cr3t-pw@db.local:5432/app", "postgres://admin:[REDACTED:url-password]@db.local:5432/app"],
      ["Authorization: Bearer abcdefghijklmnop1234567890", "Authorization: Bearer [REDACTED:bearer-token]"],
      [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter",
        "[REDACTED:private-key]\nafter",
      ],
      ["head\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (truncated", "head\n[REDACTED:private-key]"],
      ["DB_PASSWORD=hunter2hunter", "DB_PASSWORD=[REDACTED:secret-assignment]"],
      ['{"password": "hunter22"}', '{"password": "[REDACTED:secret-assignment]"}'],
      ["id AKIAIOSFODNN7EXAMPLE", "id [REDACTED:aws-access-key]"],
      [`xoxb-${"1234567890"}-abcdefghij`, "[REDACTED:slack-token]"],
      [`sk_live_${"0123456789abcdef"}`, "[REDACTED:stripe-key]"],
      [`glpat-${"x".repeat(20)}`, "[REDACTED:gitlab-token]"],
      [`AIza${"B".repeat(35)}`, "[REDACTED:google-api-key]"],
      [
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "[REDACTED:jwt]",
      ],
    ];
    expect(cases.map(([input]) => redactText(input))).toEqual(cases.map(([, output]) => output));
  });

  it("leaves code, references and ordinary text alone", () => {
    for (const text of [
      "password: string",
      "const token = process.env.GITHUB_TOKEN",
      "TOKEN_LIMIT=4096",
      'apiKey: "${API_KEY}"',
      "API_KEY=$OPENAI_API_KEY",
      "https://example.com/path:x@y",
      "risk-assessment-of-the-project",
      "nothing here",
    ]) {
      expect(redactText(text)).toBe(text);
    }
  });

  // Found by an audit: LEAKS rows passed unredacted, and some CODE rows (TOKEN_COUNT, MAX_TOKENS,
  // TOKENIZER, TOKEN_URL, `OPENAI_API_KEY: string`) were mangled. The rule they follow is in README.md.
  const SECRET = "[REDACTED:secret-assignment]";
  const LEAKS: [string, string][] = [
    ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", `aws_secret_access_key = ${SECRET}`],
    [
      "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
      `[default]\naws_access_key_id = [REDACTED:aws-access-key]\naws_secret_access_key = ${SECRET}\n`,
    ],
    ["db_password: hunter22", `db_password: ${SECRET}`],
    ['"github_token": "0a1b2c3d4e5f"', `"github_token": "${SECRET}"`],
    ["secret_key_base: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", `secret_key_base: ${SECRET}`],
    ["password=hunter22", `password=${SECRET}`],
    ["client_secret: Zx9-abc_DEF.456", `client_secret: ${SECRET}`],
    ["//registry.example.com/:_authToken=Np8mAbC123dEf456", `//registry.example.com/:_authToken=${SECRET}`],
    ["//registry.example.com/:_auth=dXNlcjpodW50ZXIyMg==", `//registry.example.com/:_auth=${SECRET}`],
    ["x-api-key: 4f3c2b1a0d9e", `x-api-key: ${SECRET}`],
    ["spring.datasource.password=hunter22", `spring.datasource.password=${SECRET}`],
    ["'password' => 'hunter22'", `'password' => '${SECRET}'`],
    ['password := "hunter22"', `password := "${SECRET}"`],
    ["mytool --token=abc123def456", `mytool --token=${SECRET}`],
    ["authorization: bearer abcdefghijklmnop1234567890", "authorization: bearer [REDACTED:bearer-token]"],
    ["Authorization: Basic dXNlcjpodW50ZXIyMg==", "Authorization: Basic [REDACTED:basic-auth]"],
    [
      "curl -H 'authorization: basic dXNlcjpodW50ZXIyMg==' $URL",
      "curl -H 'authorization: basic [REDACTED:basic-auth]' $URL",
    ],
    // Covered before the audit, kept: an upper-case name takes a bare word as its value, and a
    // dotted value with digits is a token, not a property.
    ["export GITHUB_TOKEN=abcdef123456", `export GITHUB_TOKEN=${SECRET}`],
    ["DB_PASSWORD=postgres", `DB_PASSWORD=${SECRET}`],
    ["ACCESS_TOKEN=ya29.a0AfH6SMBx", `ACCESS_TOKEN=${SECRET}`],
    ['$env:API_KEY = "abc123def456"', `$env:API_KEY = "${SECRET}"`],
  ];
  it.each(LEAKS)("redacts the value in %j", (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  const CODE: string[] = [
    "password = getPassword()",
    "const token = req.headers.authorization",
    "token: string",
    "def check_password(password):",
    'api_key=os.environ["API_KEY"]',
    "secret: process.env.SECRET",
    "password: ${{ secrets.DB_PASSWORD }}",
    "token = None",
    '"password": ""',
    "api_key=api_key",
    "password = hashedPassword",
    "token => token.trim()",
    "password: z.string().min(8)",
    "api_key: Option<String>,",
    'password: "Enter your password"',
    // Names that describe a secret, or only look like one.
    "TOKEN_COUNT=123456",
    "MAX_TOKENS=128000",
    "TOKENIZER=cl100k_base",
    "PASSWORD_MIN_LENGTH=12",
    "TOKEN_URL=https://auth.example.com/oauth/token",
    '"token_type": "Bearer"',
    "auth_type: oauth2",
    "SSH_AUTH_SOCK=/tmp/ssh-XXXXXX/agent.1234",
    "PWD=/home/user/project",
    "OPENAI_API_KEY: string;",
    "REQUIRE_PASSWORD=false",
    "the basic understanding",
  ];
  it.each(CODE)("leaves %j as written", (text) => {
    expect(redactText(text)).toBe(text);
  });

  it("finishes on a 400 KB run of dash-joined words (no pattern is quadratic)", () => {
    // An unbounded URL scheme made this take minutes: finishing within the test's timeout is the check.
    const text = "a-".repeat(200_000) + " https://user:hunter22@example.test";
    expect(redactText(text).endsWith("https://user:[REDACTED:url-password]@example.test")).toBe(true);
  });

  it("is stable: redacting twice changes nothing more", () => {
    for (const text of [`a=${OPENAI} b=postgres://u:pw123456@h`, ...LEAKS.map(([input]) => input)]) {
      const once = redactText(text);
      expect(redactText(once)).toBe(once);
    }
  });
});

// Found by the second audit (issue 19): each INPUT passed unredacted, each PUBLIC row must stay.
describe("redactText: key bodies without their BEGIN line, and formats the first audit missed", () => {
  const b64 = (seed: string, width: number) => (seed.repeat(Math.ceil(width / seed.length)) as string).slice(0, width);
  const [P1, P2, P3] = ["MIIEpAIBAAKCAQEA1x", "q2Zr8Lw+Yb/3k9", "Tn0vQm7Hs4KdE"].map((seed) => b64(seed, 64));
  const [O1, O2] = ["b3BlbnNzaC1rZXktdjEAAAAA", "BG5vbmUAAAAEbm9uZQ"].map((seed) => b64(seed, 70));
  const KEY = "[REDACTED:private-key]";
  const CASES: [name: string, input: string, expected: string][] = [
    ["read with an offset: body and END", `${P1}\n${P2}\n${P3}\nAbCdEf==\n-----END RSA PRIVATE KEY-----\n`, `${KEY}\n`],
    ["tail -n +2 of an OpenSSH key", `${O1}\n${O2}\nAAAAB3Nz\n-----END OPENSSH PRIVATE KEY-----`, KEY],
    [
      "output cut at its head, text after the key",
      `[Output truncated: the first 3 lines were cut]\n${P2}\n${P3}\n-----END PRIVATE KEY-----\nexit 0`,
      `[Output truncated: the first 3 lines were cut]\n${KEY}\nexit 0`,
    ],
    [
      "indented in YAML",
      `tls:\n  key: |\n    ${P1}\n    ${P2}\n    -----END EC PRIVATE KEY-----\n`,
      `tls:\n  key: |\n${KEY}\n`,
    ],
    ["a slice with neither BEGIN nor END", `${P1}\n${P2}\n${P3}\n`, `${KEY}\n`],
    [
      "a PGP private key block",
      `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF${P1}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\nnext`,
      `${KEY}\nnext`,
    ],
    ["the tail of a PGP private key block", `${P1}\n${P2}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----`, KEY],
    [
      "a PuTTY key",
      `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\nAAAAIBx7sQ9vLp2Mk4Rt\nPrivate-MAC: 8f2e`,
      `PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\n${KEY}\nPrivate-MAC: 8f2e`,
    ],
    [
      ".netrc on one line",
      "machine api.example.com login ada password s3cr3t-Pw",
      "machine api.example.com login ada password [REDACTED:netrc-password]",
    ],
    [
      ".netrc on several lines",
      "machine git.example.com\n  login ada\n  password hunter2x\n",
      "machine git.example.com\n  login ada\n  password [REDACTED:netrc-password]\n",
    ],
    [
      ".netrc read from its middle",
      "  login ada\n  password Zq9-x7Lm\n",
      "  login ada\n  password [REDACTED:netrc-password]\n",
    ],
    [
      ".pgpass",
      "db.internal:5432:app:ada:pg-S3cret\n*:*:*:ada:other",
      "db.internal:5432:app:ada:[REDACTED:pgpass-password]\n*:*:*:ada:[REDACTED:pgpass-password]",
    ],
    [
      "mysql -pX",
      "mysql -u root -phunter22 app < dump.sql",
      "mysql -u root -p[REDACTED:mysql-password] app < dump.sql",
    ],
    ["mysqldump -p'X'", "mysqldump -uroot -p'hunt er' app", "mysqldump -uroot -p[REDACTED:mysql-password] app"],
    [
      "curl -u user:pass",
      "curl -u ada:s3cr3t https://api.example.com",
      "curl -u ada:[REDACTED:user-password] https://api.example.com",
    ],
    [
      "curl --user=user:pass",
      "curl -s --user='ada:s3cr3t' https://x",
      "curl -s --user='ada:[REDACTED:user-password]' https://x",
    ],
    [
      "an Azure connection string",
      "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Zm9vYmFy+/abc==;EndpointSuffix=core.windows.net",
      "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net",
    ],
    [
      "an Azure SAS URL",
      "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=Ab%2Fcd1234EfGh5678ij%3D",
      "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=[REDACTED:azure-key]",
    ],
    [
      "a Google OAuth access token",
      "token: ya29.a0AfH6SMBxYz0123456789abcdefGHIJ",
      "token: [REDACTED:google-oauth-token]",
    ],
    [
      "a Google refresh token",
      '"refresh_token": "1//0gAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"',
      '"refresh_token": "[REDACTED:google-oauth-token]"',
    ],
    [
      "a token after _",
      `key_${GITHUB} and x_AKIAIOSFODNN7EXAMPLE and v_${OPENAI}`,
      "key_[REDACTED:github-token] and x_[REDACTED:aws-access-key] and v_[REDACTED:openai-key]",
    ],
  ];
  it.each(CASES)("redacts %s", (_name, input, expected) => {
    expect(redactText(input)).toBe(expected);
  });

  const PUBLIC: [name: string, text: string][] = [
    ["a certificate", `-----BEGIN CERTIFICATE-----\n${P1}\n${P2}\nAbCd\n-----END CERTIFICATE-----`],
    ["the tail of a certificate", `${P1}\n${P2}\nAbCd\n-----END CERTIFICATE-----`],
    ["a PGP signature", `-----BEGIN PGP SIGNATURE-----\n\n${P1}\n${P2}\n=AbCd\n-----END PGP SIGNATURE-----`],
    ["one base64 line", `${P1}\n`],
    ["prose about a password", 'Choose a password\npassword reset\nmysql -p\ncurl -u "$USER:$PASS" https://x'],
    ["an /etc/passwd line", "root:x:0:0:root:/root:/bin/bash"],
    ["words ending in sk-", "risk-assessment task-runner"],
  ];
  it.each(PUBLIC)("leaves %s as written", (_name, text) => {
    expect(redactText(text)).toBe(text);
  });

  it("finds key bodies in one pass: 100 000 base64 lines take no longer than the test's timeout", () => {
    const text = `${P1}\n`.repeat(100_000) + "-----END CERTIFICATE-----";
    expect(redactText(text)).toBe(text);
  });
});

describe("redactDeep", () => {
  it("ends a cycle as [Circular] rather than overflowing the stack", () => {
    const details: Record<string, unknown> = { note: "ghp_abcdefghijklmnopqrstuvwxyz0123456789" };
    details.self = details;
    expect(redactDeep(details)).toEqual({ note: "[REDACTED:github-token]", self: "[Circular]" });
  });

  it("redacts a string under a key that says secret, as it would the same pair written as text", () => {
    const details = {
      user: "ada",
      password: "hunter22",
      dbPassword: "s3cr3t-pw",
      token_count: "123456",
      apiKey: "${API_KEY}",
      nested: [{ client_secret: "abcdef123" }],
      note: "password reset",
    };
    expect(redactDeep(details)).toEqual({
      user: "ada",
      password: "[REDACTED:secret-assignment]",
      dbPassword: "[REDACTED:secret-assignment]",
      token_count: "123456",
      apiKey: "${API_KEY}",
      nested: [{ client_secret: "[REDACTED:secret-assignment]" }],
      note: "password reset",
    });
  });

  it("returns the same object when nothing changed, a new one when something did, and never touches image data", () => {
    const clean = { content: [{ type: "text", text: "ok" }], n: 1 };
    expect(redactDeep(clean)).toBe(clean);
    const image = { type: "image", data: `AKIAIOSFODNN7EXAMPLE${OPENAI}`, mimeType: "image/png" };
    const dirty = { content: [image, { type: "text", text: OPENAI }], details: { stdout: [OPENAI] } };
    expect(redactDeep(dirty)).toEqual({
      content: [image, { type: "text", text: "[REDACTED:openai-key]" }],
      details: { stdout: ["[REDACTED:openai-key]"] },
    });
    expect(dirty.content[1]).toEqual({ type: "text", text: OPENAI });
  });
});

describe("redact-secrets", () => {
  it("patches tool results (content and details) only when they hold a secret", async () => {
    const fake = await loadFake(redactSecrets);
    const base = { toolCallId: "c", toolName: "bash", input: { command: "cat .env" }, isError: false };
    expect(
      await fake.call("tool_result", { ...base, content: [{ type: "text", text: "fine" }], details: undefined }),
    ).toBeUndefined();
    expect(
      await fake.call("tool_result", {
        ...base,
        content: [{ type: "text", text: `KEY=${OPENAI}` }],
        details: { exitCode: 0, command: `echo ${OPENAI}` },
      }),
    ).toEqual({
      content: [{ type: "text", text: "KEY=[REDACTED:openai-key]" }],
      details: { exitCode: 0, command: "echo [REDACTED:openai-key]" },
    });
  });

  it("transforms a prompt that holds a secret before it enters history", async () => {
    const fake = await loadFake(redactSecrets);
    expect(await fake.call("input", { text: "hello", source: "interactive" })).toBeUndefined();
    expect(await fake.call("input", { text: `use ${GITHUB}`, source: "rpc" })).toEqual({
      action: "transform",
      text: "use [REDACTED:github-token]",
    });
  });

  it("redacts every message sent to the model, tool-call arguments included", async () => {
    const fake = await loadFake(redactSecrets);
    const messages = [
      { role: "user", content: [{ type: "text", text: "hi" }], timestamp: 1 },
      {
        role: "assistant",
        content: [
          {
            type: "toolCall",
            id: "c",
            name: "bash",
            arguments: { command: `curl -H 'Authorization: Bearer ${OPENAI}'` },
          },
        ],
        stopReason: "toolUse",
        usage: { input: 0, output: 0 },
        model: "m",
        timestamp: 2,
      },
    ];
    const result = (await fake.call("context", { messages })) as { messages: typeof messages };
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[1]!.content).toEqual([
      {
        type: "toolCall",
        id: "c",
        name: "bash",
        arguments: { command: "curl -H 'Authorization: Bearer [REDACTED:openai-key]'" },
      },
    ]);
    expect(await fake.call("context", { messages: [messages[0]] })).toBeUndefined();
  });

  it("registers redactDeep as its redactor, for what the host writes past the slots", async () => {
    const fake = await loadFake(redactSecrets);
    expect(fake.redactors).toEqual([redactDeep]);
  });

  it("uses no channel of the shared bus, which any extension can write to (the tracer imports redactDeep)", async () => {
    const bus = new Map<string, ((data: unknown) => void)[]>();
    const heard: unknown[] = [];
    bus.set("redact-secrets:redactor", [(fn) => heard.push(fn)]);
    await loadFake(redactSecrets, bus);
    expect([[...bus.keys()], heard]).toEqual([["redact-secrets:redactor"], []]);
  });
});
