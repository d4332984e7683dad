// The equal-work peer: the same binary with --equal-work does for each Memcached what the kit's
// reconciler does for its own, observable from outside as the same result, so the bench compares
// the frameworks and not the amount of work:
//   - the same Deployment (the bench hands it the one our construct renders, as a template),
//     created once and put back when any field of it drifts (our change check compares every
//     field we own);
//   - a Pod cache, mapped to the Memcached by its instance label and indexed by it (listing a
//     namespace's pods by label selector scans them all), so status.nodes lists the live pods;
//   - the status our Memcached shows: nodes, replicas, readyReplicas, observedGeneration and the
//     Available, Progressing and Degraded conditions, written only when it changes;
//   - the Events ours records: events.k8s.io/v1 `Created`, `Scaled` and `Updated`.
//
// It stays at controller-runtime's defaults otherwise (1 worker, whole objects cached), as a team
// writing it with kubebuilder would have it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The index of pods by the Memcached they belong to (the value of their instance label).
const podInstanceIndex = "memcached.instance"

// Placeholders the template holds where each Memcached's name and namespace go.
const (
	namePlaceholder      = "__NAME__"
	namespacePlaceholder = "__NAMESPACE__"
)

type EqualWorkReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// A Deployment as JSON, with the placeholders above.
	Template []byte
}

// The instance a pod belongs to: the Memcached construct's pods carry these labels.
func memcachedInstance(obj client.Object) string {
	l := obj.GetLabels()
	if l["app.kubernetes.io/name"] != "memcached" || l["app.kubernetes.io/component"] != "cache" {
		return ""
	}
	return l["app.kubernetes.io/instance"]
}

func (r *EqualWorkReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &Memcached{}
	if err := r.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	desired, err := r.deploymentFor(m)
	if err != nil {
		return ctrl.Result{}, err
	}

	deployment := &appsv1.Deployment{}
	err = r.Get(ctx, req.NamespacedName, deployment)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Create(ctx, desired); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, "Created", "Reconcile",
			"Created Deployment %s with %d replicas", m.Name, m.Spec.Size)
		deployment = desired
	case err != nil:
		return ctrl.Result{}, err
	case !setIn(desired.Spec, deployment.Spec) || !setIn(desired.Labels, deployment.Labels):
		before := ptr.Deref(deployment.Spec.Replicas, 1)
		deployment.Spec = desired.Spec
		deployment.Labels = desired.Labels
		if err := r.Update(ctx, deployment); err != nil {
			return ctrl.Result{}, err
		}
		if before != m.Spec.Size {
			r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, "Scaled", "Reconcile",
				"Scaled Deployment %s from %d to %d replicas", m.Name, before, m.Spec.Size)
		} else {
			r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, "Updated", "Reconcile",
				"Updated Deployment %s to match the spec", m.Name)
		}
	}

	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(m.Namespace), client.MatchingFields{podInstanceIndex: m.Name}); err != nil {
		return ctrl.Result{}, err
	}
	status := desiredStatus(m, deployment, pods.Items)
	if equality.Semantic.DeepEqual(status, m.Status) {
		return ctrl.Result{}, nil
	}
	m.Status = status
	return ctrl.Result{}, r.Status().Update(ctx, m)
}

// Whether every field the desired value sets has that value in the live one, as JSON: the API
// server's defaults (probe timeouts, a container's termination message path) are not drift.
// (apimachinery's Semantic.DeepDerivative counts an unset integer as 0, so every defaulted
// probe timeout would read as drift.)
func setIn(desired, live any) bool {
	var d, l any
	if b, err := json.Marshal(desired); err != nil || json.Unmarshal(b, &d) != nil {
		return false
	}
	if b, err := json.Marshal(live); err != nil || json.Unmarshal(b, &l) != nil {
		return false
	}
	return jsonSetIn(d, l)
}

func jsonSetIn(desired, live any) bool {
	switch d := desired.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range d {
			if !jsonSetIn(v, l[k]) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(d) {
			return false
		}
		for i := range d {
			if !jsonSetIn(d[i], l[i]) {
				return false
			}
		}
		return true
	default:
		return desired == live
	}
}

// The Deployment our construct renders for this Memcached, owned by it.
func (r *EqualWorkReconciler) deploymentFor(m *Memcached) (*appsv1.Deployment, error) {
	text := bytes.ReplaceAll(r.Template, []byte(namePlaceholder), []byte(m.Name))
	text = bytes.ReplaceAll(text, []byte(namespacePlaceholder), []byte(m.Namespace))
	d := &appsv1.Deployment{}
	if err := json.Unmarshal(text, d); err != nil {
		return nil, fmt.Errorf("the Deployment template: %w", err)
	}
	d.Spec.Replicas = ptr.To(m.Spec.Size)
	if err := ctrl.SetControllerReference(m, d, r.Scheme()); err != nil {
		return nil, err
	}
	return d, nil
}

// What our Memcached controller's status says, from the same inputs.
func desiredStatus(m *Memcached, d *appsv1.Deployment, pods []corev1.Pod) MemcachedStatus {
	size := m.Spec.Size
	ready, current, updated := d.Status.ReadyReplicas, d.Status.Replicas, d.Status.UpdatedReplicas
	conditions := slices.Clone(m.Status.Conditions)
	set := func(t string, s metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&conditions, metav1.Condition{
			Type: t, Status: s, Reason: reason, Message: message, ObservedGeneration: m.Generation,
		})
	}
	if ready > 0 {
		set("Available", metav1.ConditionTrue, "PodsReady", fmt.Sprintf("%d/%d pods ready", ready, size))
	} else {
		set("Available", metav1.ConditionFalse, "NoPodsReady", fmt.Sprintf("%d/%d pods ready", ready, size))
	}
	rolledOut := d.Status.ObservedGeneration >= d.Generation && d.Generation > 0
	switch {
	case rolledOut && ready == size && current == size && updated == size:
		set("Progressing", metav1.ConditionFalse, "Complete", fmt.Sprintf("all %d pods are updated and ready", size))
	case current > size:
		set("Progressing", metav1.ConditionTrue, "ScalingDown", fmt.Sprintf("scaling down from %d to %d pods", current, size))
	case current < size:
		set("Progressing", metav1.ConditionTrue, "ScalingUp", fmt.Sprintf("scaling up from %d to %d pods", current, size))
	default:
		set("Progressing", metav1.ConditionTrue, "WaitingForPods", fmt.Sprintf("%d/%d pods ready, %d updated", ready, size, updated))
	}
	if reason, message := podFailure(pods); reason != "" && (ready < size || current > ready) {
		set("Degraded", metav1.ConditionTrue, reason, message)
	} else {
		set("Degraded", metav1.ConditionFalse, "AsExpected", "the Deployment matches the spec")
	}
	return MemcachedStatus{
		Nodes:              livePodNames(pods),
		Replicas:           current,
		ReadyReplicas:      ready,
		ObservedGeneration: m.Generation,
		Conditions:         conditions,
	}
}

func livePodNames(pods []corev1.Pod) []string {
	names := []string{}
	for _, p := range pods {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	return names
}

// The first pod (by name) no node takes or whose container cannot run, as our health check reads it.
func podFailure(pods []corev1.Pod) (string, string) {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range sorted {
		if p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if p.Status.Phase != corev1.PodRunning && c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
				c.Reason == corev1.PodReasonUnschedulable && !strings.Contains(strings.ToLower(c.Message), "persistentvolumeclaim") {
				return "PodUnschedulable", fmt.Sprintf("pod %s cannot be scheduled: %s", p.Name, c.Message)
			}
		}
		for _, c := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
			if w := c.State.Waiting; w != nil && (strings.HasSuffix(w.Reason, "BackOff") || strings.HasPrefix(w.Reason, "Err") ||
				strings.HasPrefix(w.Reason, "CreateContainer") || w.Reason == "InvalidImageName") {
				return "PodFailing", fmt.Sprintf("pod %s: container %s is waiting: %s", p.Name, c.Name, w.Reason)
			}
			if t := c.State.Terminated; t != nil && t.ExitCode != 0 && p.Status.Phase == corev1.PodFailed {
				return "PodFailing", fmt.Sprintf("pod %s: container %s exited with %d", p.Name, c.Name, t.ExitCode)
			}
		}
	}
	return "", ""
}

func (r *EqualWorkReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podInstanceIndex, func(o client.Object) []string {
		if instance := memcachedInstance(o); instance != "" {
			return []string{instance}
		}
		return nil
	}); err != nil {
		return err
	}
	podToMemcached := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if instance := memcachedInstance(o); instance != "" {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: instance}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&Memcached{}).
		Owns(&appsv1.Deployment{}).
		Watches(&corev1.Pod{}, podToMemcached).
		Named("memcached").
		Complete(r)
}
