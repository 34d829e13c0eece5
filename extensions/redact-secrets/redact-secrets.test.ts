import { describe, expect, it } from "vitest";
import { loadFake } from "../../test/helpers/fake-pi.ts";
import redactSecrets, { REDACTOR_CHANNEL, REDACTOR_REQUEST, redactDeep, redactText } from "./index.ts";

const OPENAI = ["sk", "proj", "Abc123def456ghi789jkl012mno345"].join("-");
const GITHUB = `ghp_${"a1B2".repeat(9)}`;

describe("redactText", () => {
  it("replaces each kind of secret and keeps the text around it", () => {
    const cases: [string, string][] = [
      [`OPENAI_API_KEY=${OPENAI}`, "OPENAI_API_KEY=[REDACTED:openai-key]"],
      [`export GITHUB_TOKEN=${GITHUB}`, "export GITHUB_TOKEN=[REDACTED:github-token]"],
      ["postgres://admin:s3cr3t-pw@db.local:5432/app", "postgres://admin:[REDACTED:url-password]@db.local:5432/app"],
      ["Authorization: Bearer abcdefghijklmnop1234567890", "Authorization: Bearer [REDACTED:bearer-token]"],
      ["-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter", "[REDACTED:private-key]\nafter"],
      ["head\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (truncated", "head\n[REDACTED:private-key]"],
      ["DB_PASSWORD=hunter2hunter", "DB_PASSWORD=[REDACTED:secret-assignment]"],
      ['{"password": "hunter22"}', '{"password": "[REDACTED:secret-assignment]"}'],
      ["id AKIAIOSFODNN7EXAMPLE", "id [REDACTED:aws-access-key]"],
      [`xoxb-${"1234567890"}-abcdefghij`, "[REDACTED:slack-token]"],
      [`sk_live_${"0123456789abcdef"}`, "[REDACTED:stripe-key]"],
      [`glpat-${"x".repeat(20)}`, "[REDACTED:gitlab-token]"],
      [`AIza${"B".repeat(35)}`, "[REDACTED:google-api-key]"],
      ["eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED:jwt]"],
    ];
    expect(cases.map(([input]) => redactText(input))).toEqual(cases.map(([, output]) => output));
  });

  it("leaves code, references and ordinary text alone", () => {
    for (const text of [
      "password: string", "const token = process.env.GITHUB_TOKEN", "TOKEN_LIMIT=4096", 'apiKey: "${API_KEY}"',
      "API_KEY=$OPENAI_API_KEY", "https://example.com/path:x@y", "risk-assessment-of-the-project", "nothing here",
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
    ["curl -H 'authorization: basic dXNlcjpodW50ZXIyMg==' $URL", "curl -H 'authorization: basic [REDACTED:basic-auth]' $URL"],
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

describe("redactDeep", () => {
  it("ends a cycle as [Circular] rather than overflowing the stack", () => {
    const details: Record<string, unknown> = { note: "ghp_abcdefghijklmnopqrstuvwxyz0123456789" };
    details.self = details;
    expect(redactDeep(details)).toEqual({ note: "[REDACTED:github-token]", self: "[Circular]" });
  });

  it("redacts a string under a key that says secret, as it would the same pair written as text", () => {
    const details = { user: "ada", password: "hunter22", dbPassword: "s3cr3t-pw", token_count: "123456", apiKey: "${API_KEY}", nested: [{ client_secret: "abcdef123" }], note: "password reset" };
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
    expect(await fake.call("tool_result", { ...base, content: [{ type: "text", text: "fine" }], details: undefined })).toBeUndefined();
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
        content: [{ type: "toolCall", id: "c", name: "bash", arguments: { command: `curl -H 'Authorization: Bearer ${OPENAI}'` } }],
        stopReason: "toolUse", usage: { input: 0, output: 0 }, model: "m", timestamp: 2,
      },
    ];
    const result = (await fake.call("context", { messages })) as { messages: typeof messages };
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[1]!.content).toEqual([
      { type: "toolCall", id: "c", name: "bash", arguments: { command: "curl -H 'Authorization: Bearer [REDACTED:openai-key]'" } },
    ]);
    expect(await fake.call("context", { messages: [messages[0]] })).toBeUndefined();
  });

  it("offers its redactor on the shared bus whether the other extension loads before or after it", async () => {
    const bus = new Map<string, ((data: unknown) => void)[]>();
    const got: unknown[] = [];
    bus.set(REDACTOR_CHANNEL, [(fn) => got.push(fn)]); // a listener that loaded first
    const fake = await loadFake(redactSecrets, bus);
    fake.pi.events.emit(REDACTOR_REQUEST); // one that loads later asks
    expect(got).toEqual([redactDeep, redactDeep]);
  });
});
