// kstatus-check prints what kstatus (sigs.k8s.io/cli-utils/pkg/kstatus), the readiness rules
// Helm 4's --wait, Flux's health checks, kpt and Config Sync use, makes of each object it reads:
// a JSON object or a List (kubectl get -o json) on standard input, one JSON line per object out:
// {"kind":…,"name":…,"status":"Current|InProgress|Failed|Terminating|NotFound|Unknown","message":…}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type verdict struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	// apimachinery's decoder keeps whole numbers int64, as kstatus's field readers expect.
	var object map[string]interface{}
	if err := utiljson.Unmarshal(input, &object); err != nil {
		fail(err)
	}
	objects := []map[string]interface{}{object}
	if items, ok := object["items"].([]interface{}); ok {
		objects = objects[:0]
		for _, item := range items {
			if m, ok := item.(map[string]interface{}); ok {
				objects = append(objects, m)
			}
		}
	}
	out := json.NewEncoder(os.Stdout)
	for _, o := range objects {
		u := &unstructured.Unstructured{Object: o}
		result, err := status.Compute(u)
		if err != nil {
			fail(fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err))
		}
		if err := out.Encode(verdict{Kind: u.GetKind(), Name: u.GetName(), Status: result.Status.String(), Message: result.Message}); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kstatus-check:", err)
	os.Exit(1)
}
