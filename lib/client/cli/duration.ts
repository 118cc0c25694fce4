/**
 * Durations as people write them on a command line (`10m`, `90s`, `1h`, `1d`, `2 hours`), read by the `ms`
 * package, as whole seconds: what `hansard alerts add --after` and `alerts rotate --grace` take.
 */
import ms from 'ms';
import { UsageError } from '../api/errors.js';

/**
 * `value` of `flag` in whole seconds, 0 to `maxSeconds`. A bare number other than 0 is refused: `ms`
 * would read `600` as 600 milliseconds, which nobody giving `--after 600` means.
 * @throws UsageError (exit 2) naming the flag: not a duration, no unit, not whole seconds, negative, or
 *   past `maxSeconds`
 * @example durationSeconds('--after', '10m', 86_400) // 600
 */
export function durationSeconds(flag: string, value: string, maxSeconds: number): number {
  const v = value.trim();
  if (v === '0') return 0;
  const limit = `0 to ${ms(maxSeconds * 1000, { long: true })}`;
  if (/^\d+(\.\d+)?$/.test(v)) {
    throw new UsageError(`${flag} ${value} has no unit: give one, as in 90s, 10m, 1h or 1d (${limit})`);
  }
  const millis = ms(v as ms.StringValue);
  if (typeof millis !== 'number' || !Number.isFinite(millis)) {
    throw new UsageError(
      `${flag} ${value} is not a duration: give one such as 90s, 10m, 1h or 1d (${limit})`,
    );
  }
  if (millis < 0 || millis > maxSeconds * 1000) {
    throw new UsageError(`${flag} ${value} is out of range: give ${limit}`);
  }
  if (millis % 1000 !== 0) {
    throw new UsageError(`${flag} ${value} is not a whole number of seconds`);
  }
  return millis / 1000;
}

/** Seconds as `ms` writes them short (`10m`, `1h`, `1d`; `0s` for none). */
export function shortDuration(seconds: number): string {
  return seconds === 0 ? '0s' : ms(seconds * 1000);
}
