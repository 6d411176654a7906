package ir

// Digest: a fingerprint of what a workflow does, so a run that resumes
// after a crash can tell whether the workflow it started with is still the
// one being served.
//
// The digest is the SHA-256 of the workflow's JSON encoding with every
// source position removed: every Pos is zeroed and every Template's
// Segments and Path dropped. Moving a workflow in its file, adding a
// comment or renaming the file leaves the digest alone; any change to a
// step, a template, a default, a limit or the graph changes it. The walk
// works on a deep copy (made by a JSON round trip), goes through structs,
// pointers and slices of the ir types only, and never into values of type
// any (arguments' literals, defaultResults, schemas): those are user data,
// where a key named "pos" means what the author meant.
//
// encoding/json writes struct fields in declaration order and map keys
// sorted, so the encoding, and with it the digest, is deterministic.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
)

var (
	posType      = reflect.TypeFor[Pos]()
	templateType = reflect.TypeFor[Template]()
)

// Digest returns the hex SHA-256 of wf's encoding without source
// positions (see the top of this file). Two compilations of the same
// workflow, from YAML or from a plan file, have the same digest.
func Digest(wf *Workflow) string {
	data, err := json.Marshal(wf)
	if err != nil {
		// An ir.Workflow holds only JSON values (Decode reads it back);
		// failing here is a bug in whoever built it.
		panic("ir.Digest: " + err.Error())
	}
	var clone Workflow
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&clone); err != nil {
		panic("ir.Digest: " + err.Error())
	}
	stripPositions(reflect.ValueOf(&clone).Elem())
	data, err = json.Marshal(&clone)
	if err != nil {
		panic("ir.Digest: " + err.Error())
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// stripPositions zeroes every Pos reachable from v through ir structs,
// pointers and slices, and drops Template.Segments and Template.Path.
func stripPositions(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			stripPositions(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			stripPositions(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == posType {
			v.SetZero()
			return
		}
		if v.Type() == templateType {
			v.FieldByName("Segments").SetZero()
			v.FieldByName("Path").SetZero()
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				stripPositions(v.Field(i))
			}
		}
	}
}
