// src/wire.ts is what scripts/gen-wire.mjs makes of server/openapi.json
// now: the client's wire types and the server's document cannot drift.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { generate, wirePath } from "../scripts/gen-wire.mjs";

test("src/wire.ts matches server/openapi.json", () => {
  assert.equal(readFileSync(wirePath, "utf8"), generate(), "run `npm run gen` and commit src/wire.ts");
});
