package ir

// IsQueryVarName reports whether name may be a named input of query
// (FuncQuery): what may follow "$" in a JMESPath variable, a letter or _
// and then letters, digits and _. The checker refuses other names at
// compile time; the runtime refuses them in a computed call.
func IsQueryVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}
