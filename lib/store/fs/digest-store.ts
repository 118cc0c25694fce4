/**
 * `FsDigestStore`: the signed audit digests of local mode (issue 15, DESIGN §6b) as files beside the
 * segments, `{data}/tenants/{tenant}/sessions/{sid}/digests/{seq:09}.json`. Each file is written once and
 * never replaced: the bytes go to a temp file in the same folder, which is fsynced and then hard-linked
 * to the digest's name (`link` fails when the name exists, so an existing digest is never overwritten,
 * even by another process), the temp name is removed and the folders are fsynced.
 */
import { randomUUID } from 'node:crypto';
import { link, open, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { DigestConflictError, type DigestStore } from '../digests.js';
import { errorCode } from '../errors.js';
import { assertSessionKey, digestName, digestSeqOf } from '../keys.js';
import { foldersUp, makeFolders, storageFault, syncFolder } from './durable.js';

export class FsDigestStore implements DigestStore {
  /** @param root the data directory (`hansard serve --data`), as `FsSegmentStore`'s */
  constructor(private readonly root: string) {}

  /**
   * The folder of a session's digests.
   * @throws TypeError for an invalid tenant or session id (so no path leaves the data directory)
   */
  folderOf(tenant: string, sid: string): string {
    assertSessionKey(tenant, sid);
    return join(this.root, 'tenants', tenant, 'sessions', sid, 'digests');
  }

  /**
   * The file of digest `seq`.
   * @throws TypeError for an invalid tenant or session id; RangeError for a seq outside 1..999,999,999
   */
  pathOf(tenant: string, sid: string, seq: number): string {
    return join(this.folderOf(tenant, sid), digestName(seq));
  }

  /**
   * Stores digest `seq` create-only and durably (see the port): temp file, write, fsync, `link` to the
   * name, unlink the temp, fsync the folders up to the data directory. When the name exists already, its
   * bytes are compared: the same bytes resolve (a retry; the folders are synced again, as the crashed
   * attempt may not have), other bytes throw.
   * @throws DigestConflictError when other bytes are stored at `seq`
   * @throws StorageFaultError (`full`, `read_only`, `permission`, `layout`) when the disk refuses
   * @throws TypeError / RangeError for an invalid key or seq (before touching the disk)
   */
  async putDigest(tenant: string, sid: string, seq: number, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(tenant, sid, seq);
    const dir = this.folderOf(tenant, sid);
    await this.storage('open', () => makeFolders(this.root, dir), dir);
    // A dot name: `listDigests` never takes a temp file for a digest.
    const temp = join(dir, `.${digestName(seq)}.${randomUUID()}.tmp`);
    let exists = false;
    try {
      await this.storage('write', () => writeDurably(temp, bytes), temp);
      try {
        await link(temp, path);
      } catch (err) {
        if (errorCode(err) !== 'EEXIST') throw this.fault(err, 'link', path);
        exists = true;
      }
      if (exists) {
        const there = await this.getDigest(tenant, sid, seq);
        if (there === null || !Buffer.from(there).equals(bytes)) {
          throw new DigestConflictError(
            `digest ${seq} of session ${sid} is already stored with other bytes (${there?.length ?? 0} bytes, not ${bytes.length})`,
          );
        }
      }
    } finally {
      await unlink(temp).catch(() => {}); // gone already, or the write failed before making it
    }
    // The new name is in the digest folder: that one is synced every time. Its ancestors only for seq 1
    // (they may just have been made) and on a retry: digest n > 1 is written only after digest n - 1's
    // put returned (the head names it), by when every ancestor was synced. Six fsyncs fewer a digest.
    const folders = seq === 1 || exists ? foldersUp(this.root, path) : [dir];
    for (const folder of folders) {
      await this.storage('sync', () => syncFolder(folder), folder);
    }
  }

  /**
   * The bytes of digest `seq`, or null when there is none (no file, or no folder of the session).
   * @throws StorageFaultError when the disk refuses the read or the path is laid out wrong
   */
  async getDigest(tenant: string, sid: string, seq: number): Promise<Uint8Array | null> {
    const path = this.pathOf(tenant, sid, seq);
    try {
      return await readFile(path);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return null;
      throw this.fault(err, 'read', path);
    }
  }

  /**
   * The seqs of the session's digest files, ascending; [] when it has no digest folder. Temp files and
   * any other name are skipped.
   */
  async listDigests(tenant: string, sid: string): Promise<number[]> {
    const dir = this.folderOf(tenant, sid);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return [];
      throw this.fault(err, 'list', dir);
    }
    return names
      .map(digestSeqOf)
      .filter((s): s is number => s !== null)
      .sort((a, b) => a - b);
  }

  private async storage<T>(op: string, fn: () => Promise<T>, path: string): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.fault(err, op, path);
    }
  }

  private fault(err: unknown, op: string, path: string): unknown {
    return storageFault(err, op, `a digest file under ${this.root}`, path);
  }
}

/** Writes `bytes` to a new file `path` (`wx`: never an existing one) and fsyncs it before closing. */
async function writeDurably(path: string, bytes: Uint8Array): Promise<void> {
  const fh = await open(path, 'wx');
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
