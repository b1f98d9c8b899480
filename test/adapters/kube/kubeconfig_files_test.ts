/**
 * KUBECONFIG with several files means what it means to kubectl (client-go clientcmd's loading
 * rules): first file to name an entry wins with its whole entry, current-context from the first
 * file that sets it, relative paths against each file's own directory, missing files skipped,
 * `--context` selecting among the merged contexts. Errors name the file, never its secrets.
 */
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import { loadKubeConfig } from "../../../src/adapters/kube/client_node_kube.ts";
import {
  mergeKubeconfigs,
  readKubeconfigFiles,
} from "../../../src/adapters/kube/kubeconfig_files.ts";
import { CairnError } from "../../../src/domain/errors.ts";

const TOKEN_A = "FAKETOKEN-aaaa-s3cr3t";
const TOKEN_B = "FAKETOKEN-bbbb-s3cr3t";

/** A kubeconfig with one cluster, user and context, each named `name`. */
function kubeconfig(o: {
  readonly name: string;
  readonly server: string;
  readonly token?: string;
  readonly current?: string;
  readonly ca?: string;
  readonly extraUser?: string;
}): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${o.name}`,
    "  cluster:",
    `    server: ${o.server}`,
    ...(o.ca ? [`    certificate-authority: ${o.ca}`] : []),
    "users:",
    `- name: ${o.name}`,
    "  user:",
    ...(o.token ? [`    token: ${o.token}`] : []),
    ...(o.extraUser ? [`    ${o.extraUser}`] : []),
    "contexts:",
    `- name: ${o.name}`,
    `  context: {cluster: ${o.name}, user: ${o.name}}`,
    ...(o.current ? [`current-context: ${o.current}`] : []),
    "",
  ].join("\n");
}

type R = Record<string, unknown>;
const named = (doc: R, list: string, name: string) =>
  (doc[list] as R[]).find((e) => e["name"] === name);

async function inTempDir(f: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await f(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function refusal(f: () => Promise<unknown>): Promise<string> {
  try {
    await f();
  } catch (e) {
    assert(e instanceof CairnError, String(e));
    assertEquals(e.reason, "KubeconfigInvalid");
    return e.message;
  }
  throw new Error("accepted");
}

Deno.test("the first file to name a cluster, user or context wins with its whole entry", () => {
  const merged = mergeKubeconfigs([
    { path: "/a/one", text: kubeconfig({ name: "home", server: "https://a:6443", token: "ta" }) },
    {
      path: "/b/two",
      text: kubeconfig({
        name: "home",
        server: "https://b:6443",
        token: "tb",
        // A field the first entry lacks is still dropped: the entry is not merged field by field.
        extraUser: "tokenFile: /b/token",
      }),
    },
  ]);
  assertEquals((merged["clusters"] as R[]).length, 1);
  assertEquals((named(merged, "clusters", "home")!["cluster"] as R)["server"], "https://a:6443");
  assertEquals(named(merged, "users", "home")!["user"], { token: "ta" });
  assertEquals((merged["contexts"] as R[]).length, 1);
});

Deno.test("entries of different names from every file are kept, in file order", () => {
  const merged = mergeKubeconfigs([
    { path: "/a/one", text: kubeconfig({ name: "home", server: "https://a:6443" }) },
    { path: "/b/two", text: kubeconfig({ name: "lab", server: "https://b:6443" }) },
  ]);
  assertEquals((merged["contexts"] as R[]).map((c) => c["name"]), ["home", "lab"]);
  assertEquals((merged["users"] as R[]).map((c) => c["name"]), ["home", "lab"]);
});

Deno.test("current-context comes from the first file that sets it", () => {
  const merged = mergeKubeconfigs([
    { path: "/a/one", text: kubeconfig({ name: "home", server: "https://a:6443" }) },
    { path: "/b/two", text: kubeconfig({ name: "lab", server: "https://b", current: "lab" }) },
    { path: "/c/three", text: kubeconfig({ name: "x", server: "https://c", current: "x" }) },
  ]);
  assertEquals(merged["current-context"], "lab");
});

Deno.test("relative paths resolve against the directory of the file that holds them", () => {
  const merged = mergeKubeconfigs([
    { path: "/a/one", text: kubeconfig({ name: "home", server: "https://a", ca: "pki/ca.crt" }) },
    {
      path: "/b/sub/two",
      text: kubeconfig({
        name: "lab",
        server: "https://b",
        ca: "/abs/ca.crt",
        extraUser: "client-key: ../keys/lab.key",
      }).replace(
        "  user:\n",
        "  user:\n    client-certificate: lab.crt\n    tokenFile: tok\n" +
          "    exec: {command: ./bin/cred, apiVersion: client.authentication.k8s.io/v1}\n",
      ),
    },
    {
      path: "/c/three",
      text: kubeconfig({ name: "path-exec", server: "https://c" }).replace(
        "  user:\n",
        "  user:\n    exec: {command: aws, apiVersion: client.authentication.k8s.io/v1}\n",
      ),
    },
  ]);
  const ca = (n: string) =>
    (named(merged, "clusters", n)!["cluster"] as R)["certificate-authority"];
  assertEquals(ca("home"), "/a/pki/ca.crt");
  assertEquals(ca("lab"), "/abs/ca.crt"); // an absolute path is left as it is
  const lab = named(merged, "users", "lab")!["user"] as R;
  assertEquals(lab["client-certificate"], "/b/sub/lab.crt");
  assertEquals(lab["client-key"], "/b/keys/lab.key");
  assertEquals(lab["tokenFile"], "/b/sub/tok");
  assertEquals((lab["exec"] as R)["command"], "/b/sub/bin/cred");
  // A bare command name is found on PATH, so it is not a path to resolve.
  assertEquals(
    ((named(merged, "users", "path-exec")!["user"] as R)["exec"] as R)["command"],
    "aws",
  );
});

Deno.test("missing files in a KUBECONFIG list are skipped; none existing is refused", async () => {
  await inTempDir(async (dir) => {
    const present = join(dir, "present");
    await Deno.writeTextFile(present, kubeconfig({ name: "home", server: "https://a:6443" }));
    const merged = JSON.parse(
      await readKubeconfigFiles([join(dir, "gone-1"), present, join(dir, "gone-2")]),
    );
    assertEquals(merged["contexts"].map((c: R) => c["name"]), ["home"]);
    const message = await refusal(() =>
      readKubeconfigFiles([join(dir, "gone-1"), join(dir, "gone-2")])
    );
    assert(message.includes("none of the KUBECONFIG files exists"), message);
    assert(message.includes("gone-1") && message.includes("gone-2"), message);
  });
});

Deno.test("an explicit --kubeconfig file must exist", async () => {
  await inTempDir(async (dir) => {
    const message = await refusal(() => readKubeconfigFiles(join(dir, "gone")));
    assert(message.includes(`cannot load kubeconfig ${join(dir, "gone")}: no such file`), message);
  });
});

Deno.test("the client talks to the merged current context; --context picks another", async () => {
  await inTempDir(async (dir) => {
    const one = join(dir, "one"), two = join(dir, "two");
    await Deno.writeTextFile(
      one,
      kubeconfig({ name: "home", server: "https://home.example:6443", token: TOKEN_A }),
    );
    await Deno.writeTextFile(
      two,
      kubeconfig({
        name: "lab",
        server: "https://lab.example:6443",
        token: TOKEN_B,
        current: "lab",
      }),
    );
    const merged = await loadKubeConfig({ kubeconfigPath: [one, two] });
    assertEquals(merged.server, "https://lab.example:6443");
    assertEquals(merged.kc.getCurrentUser()?.token, TOKEN_B);
    const home = await loadKubeConfig({ kubeconfigPath: [one, two], context: "home" });
    assertEquals(home.server, "https://home.example:6443");
    assertEquals(home.kc.getCurrentUser()?.token, TOKEN_A);
    const message = await refusal(() =>
      loadKubeConfig({ kubeconfigPath: [one, two], context: "prod" })
    );
    assert(message.includes("no context named prod (contexts: home, lab)"), message);
  });
});

Deno.test("a malformed file in the list is named by path and line, never by its tokens", async () => {
  await inTempDir(async (dir) => {
    const good = join(dir, "good"), bad = join(dir, "bad");
    await Deno.writeTextFile(
      good,
      kubeconfig({ name: "home", server: "https://a", token: TOKEN_A }),
    );
    await Deno.writeTextFile(
      bad,
      kubeconfig({ name: "lab", server: "https://b", token: TOKEN_B }) + `\t  extra: ${TOKEN_B}\n`,
    );
    const message = await refusal(() => loadKubeConfig({ kubeconfigPath: [good, bad] }));
    assert(message.includes(bad), message);
    assert(/line \d+|\(\d+:\d+\)/.test(message), message);
    assert(!message.includes("FAKETOKEN") && !message.includes("s3cr3t"), message);
    const unnamed = join(dir, "unnamed");
    await Deno.writeTextFile(unnamed, `users:\n- user: {token: ${TOKEN_B}}\n`);
    const noName = await refusal(() => loadKubeConfig({ kubeconfigPath: [good, unnamed] }));
    assert(noName.includes("users[0] has no name"), noName);
    assert(!noName.includes("FAKETOKEN"), noName);
  });
});

Deno.test("a name repeated inside one file is refused, naming it but not its body", () => {
  const twice = kubeconfig({ name: "home", server: "https://a", token: TOKEN_A }).replace(
    "contexts:",
    `- name: home\n  user: {token: ${TOKEN_B}}\ncontexts:`,
  );
  try {
    mergeKubeconfigs([{ path: "/a/one", text: twice }]);
    throw new Error("accepted");
  } catch (e) {
    assert(e instanceof CairnError, String(e));
    assertEquals(e.reason, "KubeconfigInvalid");
    assert(e.message.includes('/a/one: users[1]: duplicate name "home"'), e.message);
    assert(!e.message.includes("FAKETOKEN"), e.message);
  }
});

Deno.test("a secret the YAML parser would quote or warn about reaches neither the error nor stderr", async () => {
  // A password starting with `*` (an alias), `|` (a block scalar) or `!` (a tag).
  const SECRET = "FAKEPASS-s3cr3t";
  const withUser = (line: string) =>
    kubeconfig({ name: "home", server: "https://a" }).replace("  user:\n", `  user:\n${line}\n`);
  const printed: string[] = [];
  // deno-lint-ignore no-console -- captures what the YAML parser would print
  const warn = process.emitWarning, consoleWarn = console.warn;
  process.emitWarning = ((w: unknown) => void printed.push(String(w))) as typeof warn;
  // deno-lint-ignore no-console -- captures what the YAML parser would print
  console.warn = (...a: unknown[]) => void printed.push(a.map(String).join(" "));
  try {
    await inTempDir(async (dir) => {
      for (const [i, line] of [`    password: *${SECRET}`, `    password: |x${SECRET}`].entries()) {
        const path = join(dir, `bad${i}`);
        await Deno.writeTextFile(path, withUser(line));
        const message = await refusal(() => loadKubeConfig({ kubeconfigPath: path }));
        assert(message.includes(path) && message.includes("not valid YAML"), message);
        assert(!message.includes("s3cr3t"), message);
      }
      mergeKubeconfigs([{ path: "/a/one", text: withUser(`    password: !${SECRET} x`) }]);
    });
  } finally {
    process.emitWarning = warn;
    // deno-lint-ignore no-console -- captures what the YAML parser would print
    console.warn = consoleWarn;
  }
  assert(!printed.some((p) => p.includes("s3cr3t")), printed.join("\n"));
});
