package diff

// Path addresses one node of a value, as a sequence of Elements. It has one
// textual notation shared by the whole library (diff, ownership, oscillation
// reports, condition messages):
//
//	.spec.replicas                           fields (and map keys that are identifiers)
//	.metadata.labels["app.kubernetes.io/name"]  a map key that needs quoting
//	.items[name="x"].v                       a list item keyed by one field
//	.ports[port=80,protocol="TCP"]           a list item keyed by several fields
//	.tags[="a"]                              a set item, by value
//	.args[2]                                 a list position (atomic lists, diffs)
//
// The empty Path is the root and formats as ".".
type Path []Element

// ElementKind says which of the Element forms is used.
type ElementKind uint8

const (
	// FieldElem is a struct field or map key: Name.
	FieldElem ElementKind = iota + 1
	// KeyElem is a list item identified by key fields: Keys.
	KeyElem
	// ValueElem is a set item identified by its own scalar value: Value.
	ValueElem
	// IndexElem is a list position: Index.
	IndexElem
)

// Element is one step of a Path.
type Element struct {
	Kind ElementKind
	// Name is the field or map key, for FieldElem.
	Name string
	// Keys identify a list item, for KeyElem, in the order the schema lists
	// its key fields.
	Keys []KeyField
	// Value identifies a set item, for ValueElem: a string, bool, float64,
	// int64, or nil.
	Value any
	// Index is the position, for IndexElem.
	Index int
}

// KeyField is one field=value pair of a KeyElem. Value is a string, bool,
// float64, int64, or nil.
type KeyField struct {
	Name  string
	Value any
}
