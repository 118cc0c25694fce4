// `unicode-match-property-value-ecmascript` ships no types: its data module is a Map from a property's
// name to a Map from each alias of a value to the value's canonical name (lib/log/format/text-scripts.ts).
declare module 'unicode-match-property-value-ecmascript/data/mappings.js' {
  const mappings: ReadonlyMap<string, ReadonlyMap<string, string>>;
  export default mappings;
}
