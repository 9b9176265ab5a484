// Package jsonscan is steady's one hand-written JSON reader. The store keeps
// objects as encoding/json text and reads them on every write; three of those
// reads are hot enough to be worth not going through encoding/json:
//
//   - Decode and DecodeShape build the map[string]any / []any trees that
//     package ownership works on (two per write), with keys and plain strings
//     sliced from one copy of the input.
//   - Reader reads a value token by token for a decoder that knows its
//     shape, so the store reads Meta and Conditions without reflection and
//     slices Spec and Status, validating every byte once.
//   - ChangedScalars compares two values token by token and finds the scalar
//     leaves whose text changed, without building either tree.
//   - A Shape (a shape key made ready, NewShape) lets a reader whose value
//     likely has a known shape key read it against that key
//     (Reader.RawOfShape, ChangedScalarsOfShape), reading only its scalars;
//     they answer as RawShape and ChangedScalarsTo do, or decline.
//
// Every entry point accepts exactly what encoding/json accepts, or less (it
// reports false or an error, and the caller then takes the encoding/json way);
// what it accepts it reads as encoding/json does. Fuzz targets hold it to that,
// with encoding/json as the oracle.
package jsonscan
