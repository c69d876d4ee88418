"""Where `modelplane validate` and `crossplane beta validate` may differ, case by case:
the one list test_beta_validate.py reads (a case listed here must still differ, so the
list cannot go stale; every other case must agree). docs/tools/validate.md says the same.

Both differences are beta validate's, measured against kube-apiserver v1.35.4 (the
API-server suite requires `modelplane validate` to agree with the server on every one):

- NULL: the server drops a null in a field that is neither nullable nor defaulted
  before validating (k8s.io/apiextensions-apiserver@v0.35.4
  pkg/apiserver/schema/defaulting/prunenulls.go:44-66), so `kubectl apply` accepts it;
  beta validate rejects it as a wrong type. `modelplane validate` accepts and warns.
- RULES: once a value is missing, unsupported or of the wrong type the server runs no
  CEL rule and reports "some validation rules were not checked" at no field
  (pkg/registry/customresource/strategy.go:217-223, 404-411 there); beta validate runs
  every rule anyway (a rule reading an absent field fails with "no such key") and never
  reports that error.
"""
from __future__ import annotations

NULL = ("null dropped by the API server (accepted, `validate` warns); beta validate rejects it "
        "as a wrong type")
RULES = ("the API server skips the CEL rules after a blocking error and says so ('some validation rules "
         "were not checked', at no field); beta validate runs them")

BETA_VALIDATE: dict[str, str] = {
    "validate:null object": NULL,
    "validate:null array": NULL,
    "validate:null scalar": NULL,
    "validate:null int-or-string": NULL,
    "validate:null preserve-unknown-fields object": NULL,
    "validate:null map value": NULL,
    "validate:null inside an object": NULL,
    "apis:selector over 10 KiB": RULES,
    "apis:engines missing": RULES,
    "apis:engines null": f"{RULES}; and it reads the null as a wrong type where the server drops it, "
                         "then finds the field missing",
    "apis:unsupported value beside a failing rule": RULES,
    "apis:CA bundle in another kind": RULES,
}

# The cases where `modelplane validate` must warn (and nowhere else in the corpus).
WARNED = frozenset(k for k, why in BETA_VALIDATE.items() if why == NULL)
