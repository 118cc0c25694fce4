/** hansard's version, recorded in every `writer.start` (`meta.hansard_version`); kept equal to package.json by a test. */
export const HANSARD_VERSION = '0.1.0';
