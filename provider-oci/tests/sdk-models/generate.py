#!/usr/bin/env python3
"""Writes the SDK-model fixtures of provider-oci from Oracle's Go SDK (run by hand, not in CI).

Usage: generate.py SDK_DIR [OUT_DIR]

SDK_DIR is an unpacked tree of github.com/oracle/oci-go-sdk holding at least its
`containerengine`, `core` and `identity` packages (e.g. `git archive HEAD containerengine core
identity common/version.go | tar -x -C SDK_DIR`). For every model in MODELS it writes
OUT_DIR/<package>/<Model>.full.json (every field the SDK declares, each with a value of its
type) and OUT_DIR/<package>/<Model>.minimal.json (only the fields the SDK marks mandatory).
OUT_DIR defaults to this script's folder. Python 3 standard library only.
"""

import json
import os
import re
import sys

# The models provider-oci reads, by package: each is one answer (or one item of a list answer).
MODELS = {
    "containerengine": [
        "Cluster",
        "ClusterSummary",
        "ClusterOptions",
        "NodePool",
        "NodePoolSummary",
        "NodePoolOptions",
        "Node",
        "WorkRequest",
        "WorkRequestError",
    ],
    "core": [
        "Vcn",
        "Subnet",
        "InternetGateway",
        "NatGateway",
        "ServiceGateway",
        "Service",
        "RouteTable",
        "SecurityList",
    ],
    "identity": ["AvailabilityDomain"],
}

# How deep nested models are filled in the full fixtures (the top model is depth 0).
MAX_DEPTH = 4

TYPE_DECL = re.compile(r"^type (\w+) (struct|interface|string) ?\{?", re.M)
FIELD = re.compile(
    r'^\s+(\w+)\s+([^`\s]+)\s+`(?=[^`]*mandatory:"(true|false)")(?=[^`]*json:"([^",]+))[^`]*`',
    re.M,
)
ENUM_VALUE = re.compile(r'^\s+\w+\s+(\w+Enum)\s*=\s*"([^"]*)"', re.M)
DISCRIMINATOR = re.compile(r'^\s+\w+\s+string\s+`json:"(\w+)"`', re.M)
CASE = re.compile(r'case "([^"]+)":\s*\n\s*mm := (\w+)\{\}')


class Package:
    """The declarations of one Go package: structs with their fields, interfaces, enums."""

    def __init__(self, folder):
        self.structs = {}  # name -> source of its body
        self.interfaces = set()
        self.enums = {}  # enum type -> its values, in order
        self.polymorphic = {}  # interface name -> (discriminator json name, [(value, concrete)])
        for entry in sorted(os.listdir(folder)):
            if not entry.endswith(".go") or entry.endswith("_test.go"):
                continue
            with open(os.path.join(folder, entry), encoding="utf-8") as f:
                self.read(f.read())

    def read(self, text):
        for m in TYPE_DECL.finditer(text):
            name, kind = m.group(1), m.group(2)
            if kind == "struct":
                self.structs[name] = body_of(text, m.end())
            elif kind == "interface":
                self.interfaces.add(name)
        for m in ENUM_VALUE.finditer(text):
            self.enums.setdefault(m.group(1), []).append(m.group(2))
        for name in list(self.interfaces):
            lower = name.lower()
            if lower in self.structs and name not in self.polymorphic:
                disc = DISCRIMINATOR.search(self.structs[lower])
                cases = CASE.findall(text) if f"func (m *{lower}) UnmarshalPolymorphicJSON" in text else []
                if disc and cases:
                    self.polymorphic[name] = (disc.group(1), cases)

    def fields(self, struct):
        """(json name, Go type, mandatory) of each field of `struct`."""
        return [(m.group(4), m.group(2), m.group(3) == "true") for m in FIELD.finditer(self.structs[struct])]


def body_of(text, start):
    """The text of a struct's body from `start` (just past its `{`) to its closing brace."""
    depth, i = 1, start
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1]


class Filler:
    """Makes JSON values of Go types, full (every field) or minimal (mandatory fields only)."""

    def __init__(self, package, minimal):
        self.p = package
        self.minimal = minimal

    def model(self, name, depth, seen):
        if name in self.p.polymorphic:
            disc, cases = self.p.polymorphic[name]
            value, concrete = cases[0]
            out = {disc: value}
            out.update(self.model(concrete, depth, seen))
            return out
        if name not in self.p.structs:
            return {}
        out = {}
        for json_name, go_type, mandatory in self.p.fields(name):
            if self.minimal and not mandatory:
                continue
            if not mandatory and (depth >= MAX_DEPTH or self.refers_to(go_type, seen)):
                continue
            out[json_name] = self.value(go_type, json_name, depth, seen | {name})
        return out

    def refers_to(self, go_type, seen):
        return re.sub(r"^(\*|\[\]|map\[string\])+", "", go_type) in seen

    def value(self, go_type, json_name, depth, seen):
        t = go_type.lstrip("*")
        if t.startswith("[]"):
            return [self.value(t[2:], json_name, depth, seen)]
        if t.startswith("map[string]"):
            inner = t[len("map[string]"):]
            key = "Department" if inner == "string" else "Operations"
            return {key: self.value(inner, json_name, depth, seen)}
        if t == "string":
            return example_string(json_name)
        if t in ("int", "int64", "int32"):
            return 2
        if t in ("float32", "float64"):
            return 2.5
        if t == "bool":
            return True
        if t == "common.SDKTime":
            return "2026-01-02T03:04:05.678Z"
        if t == "interface{}":
            return "CostCenter-42"
        if t in self.p.enums:
            return self.p.enums[t][0]
        return self.model(t, depth + 1, seen)


def example_string(json_name):
    """A plausible string for a field: an OCID for ids, a CIDR for blocks, else a label."""
    lower = json_name.lower()
    if lower == "id" or lower.endswith("id"):
        return f"ocid1.{json_name.lower()}.oc1.iad.aaaaexample"
    if "cidr" in lower or lower in ("destination", "source"):
        return "10.0.0.0/16"
    if lower in ("kubernetesversion", "kubernetesversions", "availablekubernetesupgrades"):
        return "v1.31.1"
    return f"example-{json_name}"


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    sdk, out = argv[1], argv[2] if len(argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    for package, models in MODELS.items():
        p = Package(os.path.join(sdk, package))
        os.makedirs(os.path.join(out, package), exist_ok=True)
        for model in models:
            if model not in p.structs:
                sys.exit(f"{package}.{model} is not in {sdk}")
            for kind, minimal in (("full", False), ("minimal", True)):
                value = Filler(p, minimal).model(model, 0, frozenset())
                path = os.path.join(out, package, f"{model}.{kind}.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(value, f, indent=2, sort_keys=True)
                    f.write("\n")
                print(path)


if __name__ == "__main__":
    main(sys.argv)
