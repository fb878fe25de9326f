/**
 * The applications in flight in this process, by idempotency scope.
 * @module
 */

/**
 * A map from scope to the promise of its one application in flight, with the usual single entry
 * held outside the Map.
 * @remarks Writes in flight in one process seldom overlap, so the table mostly holds one entry and
 * empties again after each write. A V8 Map that empties allocates a fresh hash table on that delete
 * (it shrinks), and as the Map itself lives long the new table is promoted: old-generation garbage
 * on every write. The single slot allocates nothing; further entries go to the Map.
 */
export class InflightTable {
  private soleScope: string | null = null;
  private soleApplication: Promise<unknown> | undefined = undefined;
  private readonly others = new Map<string, Promise<unknown>>();

  /** The application in flight for `scope`, if any. */
  get(scope: string): Promise<unknown> | undefined {
    return scope === this.soleScope ? this.soleApplication : this.others.size === 0 ? undefined : this.others.get(scope);
  }

  /** True while `scope` has an application in flight. */
  has(scope: string): boolean {
    return scope === this.soleScope || (this.others.size !== 0 && this.others.has(scope));
  }

  /** Make `application` the one in flight for `scope` (replacing any other). */
  set(scope: string, application: Promise<unknown>): void {
    if (scope === this.soleScope || (this.soleScope === null && !this.others.has(scope))) {
      this.soleScope = scope;
      this.soleApplication = application;
    } else {
      this.others.set(scope, application);
    }
  }

  /** Forget `scope` if `application` is still the one in flight for it. */
  deleteIf(scope: string, application: Promise<unknown>): void {
    if (scope === this.soleScope) {
      if (this.soleApplication !== application) return;
      this.soleScope = null;
      this.soleApplication = undefined;
    } else if (this.others.get(scope) === application) {
      this.others.delete(scope);
    }
  }
}
