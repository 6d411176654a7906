// Package fuzzkit is what the module's fuzz targets share: small seeds
// cut from the workflow files (Split, Files), the input size they skip
// above (MaxInput), and the test for Go's own rendering of values in a
// message meant for a user (GoText). Only tests import it; `make fuzz`
// (scripts/fuzz.sh) runs the targets.
package fuzzkit
