/** Registers the targets compiled into this build. Imported once, for its side effect, by main. */
import { registerTarget } from "./targets.js";

registerTarget("vault", async () => (await import("../targets/vault/target.js")).vaultTarget());
