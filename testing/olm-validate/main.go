// olm-validate checks an OLM bundle directory (manifests/ and metadata/) as `operator-sdk bundle
// validate --select-optional suite=operatorframework` does: operator-framework/api's default
// bundle validators, OperatorHub v2 and good practices. It prints one JSON line per result
// ({"type","name","level","message"}) and exits 1 when any is an error.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

type finding struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate <bundle dir>")
		os.Exit(2)
	}
	bundle, err := manifests.GetBundleFromDir(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "reading the bundle: %v\n", err)
		os.Exit(2)
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.GoodPracticesValidator,
	)
	objects := append(bundle.ObjectsToValidate(), bundle)
	failed := false
	out := json.NewEncoder(os.Stdout)
	for _, result := range validators.Validate(objects...) {
		for _, e := range append(result.Errors, result.Warnings...) {
			level := "warning"
			if e.Level == errors.LevelError {
				level = "error"
				failed = true
			}
			_ = out.Encode(finding{Type: string(e.Type), Name: result.Name, Level: level, Message: e.Error()})
		}
	}
	if failed {
		os.Exit(1)
	}
}
