import { errorMessage } from "./errors.js";
import type { Informer } from "./informer.js";
import type { Logger } from "./log.js";
import type { KubeObject, ResourceType } from "./types.js";

/** A kind that may or may not be served (its CRD installed later, or never), in the versions a target reads. */
export interface OptionalKind {
  /** The API group; "" for the core group. */
  group: string;
  kind: string;
  /** The versions the caller understands, preferred first: the informer runs on the first one served. */
  versions: readonly string[];
}

/** What an InformerWhenServed needs of its manager. */
export interface WhenServedHooks {
  /** Discovery: the resource serving apiVersion + kind, or undefined when none does. */
  find(apiVersion: string, kind: string): Promise<ResourceType | undefined>;
  /** Creates (and, in a started manager, starts) the informer for a served resource. */
  start(type: ResourceType): Informer<KubeObject>;
  /** Stops the informer and takes it out of the manager, so reads of the kind no longer come from it. */
  retire(informer: Informer<KubeObject>): void;
  /** Told once the kind is no longer served at all (its informer retired, none started instead). */
  gone?(): void;
  stopped(): boolean;
  log: Logger;
}

const apiVersionOf = (group: string, version: string) => (group ? `${group}/${version}` : version);

/**
 * Keeps one informer for a kind while discovery says it is served: none while it is not, one on
 * the preferred version served once it is, moved when that changes, retired when the kind goes
 * (its CRD deleted). The manager calls check() whenever discovery may have changed.
 */
export class InformerWhenServed {
  private current?: Informer<KubeObject>;
  private running?: Promise<void>;
  private again = false;

  constructor(
    readonly kind: OptionalKind,
    private readonly hooks: WhenServedHooks,
  ) {}

  /** The informer running now, if the kind is served. */
  get informer(): Informer<KubeObject> | undefined {
    return this.current;
  }

  /**
   * Asks discovery again and starts, moves or retires the informer. Checks never overlap: one asked
   * for while another runs makes that one look once more when it is done. Never rejects.
   */
  check(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.once();
      } while (this.again && !this.hooks.stopped());
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async once(): Promise<void> {
    const { group, kind, versions } = this.kind;
    let served: ResourceType | undefined;
    try {
      for (const v of versions) {
        served = await this.hooks.find(apiVersionOf(group, v), kind);
        if (served) break;
      }
    } catch (e) {
      // Discovery of a group-version failed (an aggregated API down): what runs keeps running.
      this.hooks.log.warn(
        { kind, group, err: errorMessage(e) },
        "discovery failed; the informer of this kind is left as it is",
      );
      return;
    }
    if (this.hooks.stopped()) return;
    const now = this.current?.type;
    if (served && now && served.version === now.version && served.plural === now.plural) return;
    if (!served && !now) return;
    if (this.current) {
      this.hooks.retire(this.current);
      this.current = undefined;
    }
    if (served) this.current = this.hooks.start(served);
    else this.hooks.gone?.();
    this.hooks.log.info(
      { kind, group, version: served?.version ?? null, was: now?.version ?? null },
      served ? "kind served: watching it" : "kind no longer served: its informer stopped",
    );
  }
}
