/**
 * An API client that edits the uploaded file while `hansard upload` runs: the set-up of the upload
 * edit-during attack suites (test/attack/digests-upload-edit-during, digests-upload-edit-during-outcome).
 */
import { ApiClient } from '../../lib/client/api/client.js';

/** A client that runs `during()` before its `n`th chunk POST. */
export class EditingClient extends ApiClient {
  private posts = 0;
  constructor(
    url: string,
    token: string,
    private readonly n: number,
    private readonly during: () => void,
  ) {
    super({ url, token });
  }
  override async request(method: string, path: string, init: Parameters<ApiClient['request']>[2] = {}) {
    if (method === 'POST' && path.includes('/chunks')) {
      this.posts += 1;
      if (this.posts === this.n) this.during();
    }
    return super.request(method, path, init);
  }
}
