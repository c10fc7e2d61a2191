package server

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/tidemark/tidemark/api"
)

// The OpenAPI document describes every field of every wire type: each
// JSON field of the type is a property of its schema with a description,
// and the schema has no property the type lacks.
func TestOpenAPIDescribesEveryField(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPI)
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]reflect.Type{
		"Memory":              reflect.TypeFor[api.Memory](),
		"Search":              reflect.TypeFor[api.SearchRequest](),
		"Range":               reflect.TypeFor[api.Range](),
		"Weights":             reflect.TypeFor[api.Weights](),
		"Result":              reflect.TypeFor[api.SearchResult](),
		"Hit":                 reflect.TypeFor[api.Hit](),
		"Signals":             reflect.TypeFor[api.Signals](),
		"Removed":             reflect.TypeFor[api.Removed](),
		"Collection":          reflect.TypeFor[api.Collection](),
		"CreateCollection":    reflect.TypeFor[api.CreateCollection](),
		"RemoteEmbedder":      reflect.TypeFor[api.RemoteEmbedder](),
		"Planner":             reflect.TypeFor[api.Planner](),
		"PutResult":           reflect.TypeFor[api.PutResult](),
		"RetractResponse":     reflect.TypeFor[api.RetractResponse](),
		"MemoryList":          reflect.TypeFor[api.MemoryList](),
		"ConsolidationReport": reflect.TypeFor[api.ConsolidationReport](),
		"AuditEntry":          reflect.TypeFor[api.AuditEntry](),
		"DocumentReport":      reflect.TypeFor[api.DocumentReport](),
	} {
		ref := doc.Components.Schemas[name]
		if ref == nil || ref.Value == nil {
			t.Errorf("no schema %s for %v", name, typ)
			continue
		}
		props := ref.Value.Properties
		fields := map[string]bool{}
		for f := range jsonFields(typ) {
			fields[f] = true
			p := props[f]
			switch {
			case p == nil:
				t.Errorf("%s: no property %q (%v)", name, f, typ)
			case p.Ref == "" && (p.Value == nil || strings.TrimSpace(p.Value.Description) == ""):
				t.Errorf("%s.%s: no description", name, f)
			}
		}
		for p := range props {
			if !fields[p] {
				t.Errorf("%s: property %q is no field of %v", name, p, typ)
			}
		}
		// Required: the fields always written (no omitempty or omitzero).
		var want []string
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag.Get("json")
			field, opts, _ := strings.Cut(tag, ",")
			if field != "" && field != "-" && !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
				want = append(want, field)
			}
		}
		if got := ref.Value.Required; !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: required %v, want %v (the fields without omitempty)", name, got, want)
		}
	}
}

// jsonFields yields the JSON names of t's fields (embedded structs' fields
// included).
func jsonFields(t reflect.Type) func(func(string) bool) {
	return func(yield func(string) bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "-" || !f.IsExported() {
				continue
			}
			if f.Anonymous && tag == "" {
				for g := range jsonFields(f.Type) {
					if !yield(g) {
						return
					}
				}
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if !yield(tag) {
				return
			}
		}
	}
}
