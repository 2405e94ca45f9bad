/**
 * The host's HNS as one process keeps it: the addon (loaded on first use, so VERSION never loads it), the API choice
 * (made once per apiVersion setting: it is a property of the host, seed 001), the OS helpers, and — in the resident
 * service — the HCN handles kept between verbs (src/hns/held-handles.ts). Each is a cache of the host; nothing here
 * belongs to a request.
 */
import type { NetConf } from '../cni/types';
import type { Listing } from '../hns/api';
import { Hcn, type HcnCallObserver } from '../hns/hcn';
import { HeldHandles } from '../hns/held-handles';
import { hostOs, type HostOs } from '../hns/host-os';
import type { LoadOptions } from '../hns/native';
import type { NativeHcn } from '../hns/native-types';
import { chooseApi, type ApiChoice } from './api-version';

export interface HostHnsOptions {
  /** Where to find the addon and the HCN library. */
  load?: LoadOptions;
  /** An already loaded addon (tests, or a host that embeds the plugin). */
  native?: NativeHcn;
  /** How V2Api lists all objects (default auto: one v1 GET when HNSCall exists). */
  listing?: Listing;
  /** Told of every HCN call as it ends (the resident service's metrics and HNS health). */
  onHcnCall?: HcnCallObserver;
  /** Keep HCN handles between verbs (the resident service; src/hns/held-handles.ts). */
  holdHandles?: boolean;
}

export class HostHns {
  private hcnInstance: Hcn | undefined;
  private readonly choices = new Map<string, Promise<ApiChoice>>();
  private osInstance: HostOs | undefined;
  /** HCN handles kept between verbs (holdHandles only). */
  readonly heldHandles: HeldHandles | undefined;

  constructor(private readonly options: HostHnsOptions = {}) {
    this.heldHandles = options.holdHandles ? new HeldHandles() : undefined;
  }

  /**
   * The HCN facade with this request's time limit. The addon is loaded once; each call gets a facade of its own
   * timeout, so requests running at once in the service (src/service) each keep their hnsTimeoutSeconds.
   */
  hcn(conf: Pick<NetConf, 'hnsTimeoutSeconds'>): Hcn {
    const timeoutMs = conf.hnsTimeoutSeconds * 1000;
    if (!this.hcnInstance) {
      const observer = this.options.onHcnCall;
      const options = { timeoutMs, ...(observer ? { observer } : {}) };
      if (this.options.native) {
        const native = this.options.native;
        this.hcnInstance = new Hcn(native, native.capabilities(), options);
      } else {
        this.hcnInstance = Hcn.open({ ...options, ...(this.options.load ? { load: this.options.load } : {}) });
      }
    }
    return this.hcnInstance.withTimeout(timeoutMs);
  }

  os(): HostOs {
    this.osInstance ??= hostOs(this.options.native, this.options.load);
    return this.osInstance;
  }

  /**
   * The HNS API for this host, decided once per process (per apiVersion setting), over a facade with this request's
   * time limit.
   */
  async api(conf: Pick<NetConf, 'apiVersion' | 'hnsTimeoutSeconds'>): Promise<ApiChoice> {
    const hcn = this.hcn(conf);
    const key = String(conf.apiVersion);
    let choice = this.choices.get(key);
    if (!choice) {
      choice = chooseApi(conf.apiVersion, hcn, this.options.listing, this.heldHandles);
      choice.catch(() => this.choices.delete(key));
      this.choices.set(key, choice);
    }
    const chosen = await choice;
    return { ...chosen, api: chosen.api.withHcn(hcn) };
  }
}
