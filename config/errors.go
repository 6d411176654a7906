package config

// The codes of vmcp.yaml's diagnostics. They are stable across releases,
// so tools and tests can match on them; the message says what is wrong and
// how to fix it. TestLoadErrorCodes fails when one of them is never
// produced by a test config.
const (
	CodeYAMLSyntax        = "yaml_syntax"        // the file is not YAML
	CodeMultipleDocuments = "multiple_documents" // more than one YAML document
	CodeBadType           = "bad_type"           // a mapping, list, string, boolean or integer was expected
	CodeBadKey            = "bad_key"            // a mapping key that is not a string
	CodeDuplicateKey      = "duplicate_key"      // one key twice, also spelled two ways (max_parallel and maxParallel)
	CodeUnknownField      = "unknown_field"      // with a did-you-mean when one is close
	CodeMissingField      = "missing_field"
	CodeBadValue          = "bad_value" // the right type, but not a valid value (a duration, an address, a URL, ...)
	CodeBadName           = "bad_name"  // a backend name that cannot prefix tool references
	CodeBadEnvRef         = "bad_env_ref"
	CodeMissingEnv        = "missing_env"   // ${VAR} names a variable that is not set
	CodeBadEnvValue       = "bad_env_value" // ${VAR} is set, but not to a value of the field's type
	CodeEmptyToken        = "empty_token"   // a bearer token that is empty once expanded
	CodeUnknownScope      = "unknown_scope"
	CodeUnknownBackend    = "unknown_backend"    // authoring.backends names a backend that is not configured
	CodeWorkflowNotFound  = "workflow_not_found" // a workflows: entry matches no file
	CodeDuplicateOwner    = "duplicate_owner"    // two tokens with one name (the owner of their runs)
)

// codes lists every code above, for TestLoadErrorCodes.
var codes = []string{
	CodeYAMLSyntax, CodeMultipleDocuments, CodeBadType, CodeBadKey, CodeDuplicateKey,
	CodeUnknownField, CodeMissingField, CodeBadValue, CodeBadName, CodeBadEnvRef,
	CodeMissingEnv, CodeBadEnvValue, CodeEmptyToken, CodeUnknownScope, CodeUnknownBackend,
	CodeWorkflowNotFound, CodeDuplicateOwner,
}
