// Starts a real `tidemark serve`, built from this checkout (or the binary
// TIDEMARK_BIN names), on loopback with a fresh data directory, and stops
// it: bounded in time, cleaned up.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const token = "node-test-admin-token-3f9a1c7e";

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), "tidemark-node-"));
  let bin = process.env.TIDEMARK_BIN;
  if (!bin) {
    bin = join(dir, "tidemark");
    execFileSync("go", ["build", "-o", bin, "./cmd/tidemark"], { cwd: root, stdio: "inherit", timeout: 600_000 });
  }
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify([{ token, name: "node", collections: ["*"], write: true }]), { mode: 0o600 });
  const port = await freePort();
  const proc = spawn(bin, ["serve", "--data", join(dir, "data"), "--addr", `127.0.0.1:${port}`, "--tokens", tokens], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (b) => (stderr += b));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(url + "/healthz", { signal: AbortSignal.timeout(1000) });
      if (r.ok) break;
    } catch {
      // not up yet
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`tidemark serve did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    token,
    async stop() {
      proc.kill("SIGTERM");
      await new Promise((resolve) => {
        const t = setTimeout(() => {
          proc.kill("SIGKILL");
          resolve();
        }, 15_000);
        proc.once("exit", () => {
          clearTimeout(t);
          resolve();
        });
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
