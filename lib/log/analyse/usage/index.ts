/** Token usage and list-price cost (issue 27, docs/usage.md): the counting rules, the prices, the totals. */
export * from './figures.js';
export * from './fold.js';
export * from './price.js';
export * from './sources.js';
export * from './totals.js';
