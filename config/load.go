package config

import "fmt"

// Load reads and validates the config file at path. env looks up variables
// for ${VAR} expansion (os.LookupEnv in production); a variable it does not
// know is an error naming the variable and the field that used it.
// Unknown top-level keys are errors with their position, except
// compositeTools/composite_tools, which belong to the workflow parser.
func Load(path string, env func(string) (string, bool)) (*Config, error) {
	return nil, fmt.Errorf("config.Load: not implemented yet")
}
