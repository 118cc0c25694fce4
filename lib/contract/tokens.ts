/**
 * The form of a hansard API token (DESIGN §4): `hns_` + 43 base62 characters (≈256 random bits). The
 * server mints and checks it (lib/service/tokens/create.ts); clients check a token's form before sending it
 * (lib/client/api/token-form.ts, `hansard integrations`, `hansard serve`'s bootstrap token).
 */

/** Every token the server mints, and nothing else. */
export const TOKEN_PATTERN = /^hns_[0-9A-Za-z]{43}$/;
/** A token's length in characters: `hns_` and 43. */
export const TOKEN_LENGTH = 4 + 43;
