#!/usr/bin/env python3
"""Golden vectors for provider-oci's request signer, made with Oracle's own Python SDK.

    python3 -m venv /tmp/oci && /tmp/oci/bin/pip install oci==2.189.0
    /tmp/oci/bin/python oci-signer/testdata/make-vectors.py > oci-signer/testdata/signer-vectors.json

The SDK's `oci.signer.Signer` signs each request below (as the SDK's clients do, through
`requests`); the file records every header it set. The RSA key is generated here for the vectors
only (it signs nothing else) and is written into the file in both PEM forms OCI accepts. Only the
vectors are committed, not the SDK.
"""

import json
import sys

import oci
from oci._vendor import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

TENANCY = "ocid1.tenancy.oc1..aaaaaaaagoldenvectortenancy0000000000000000000000000000"
USER = "ocid1.user.oc1..aaaaaaaagoldenvectoruser000000000000000000000000000000000"
FINGERPRINT = "20:3b:97:13:55:1c:12:34:56:78:9a:bc:de:f0:12:34"
DATE = "Tue, 01 Dec 2026 21:00:00 GMT"
CE = "https://containerengine.us-ashburn-1.oci.oraclecloud.com/20180222"
CORE = "https://iaas.us-ashburn-1.oraclecloud.com/20160918"

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pkcs8 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption()).decode()
pkcs1 = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                          serialization.NoEncryption()).decode()
signer = oci.signer.Signer(TENANCY, USER, FINGERPRINT, None, private_key_content=pkcs8)

cases = [
    ("GET", f"{CE}/clusters?compartmentId=ocid1.compartment.oc1..aaaaaaaacomp&lifecycleState=ACTIVE&limit=50", None),
    ("GET", f"{CE}/workRequests/ocid1.clustersworkrequest.oc1.iad.aaaaaaaawr", None),
    ("DELETE", f"{CE}/clusters/ocid1.cluster.oc1.iad.aaaaaaaacluster", None),
    ("HEAD", f"{CORE}/vcns/ocid1.vcn.oc1.iad.aaaaaaaavcn", None),
    ("POST", f"{CE}/clusters", json.dumps({
        "name": "team-a-prod", "compartmentId": "ocid1.compartment.oc1..aaaaaaaacomp",
        "vcnId": "ocid1.vcn.oc1.iad.aaaaaaaavcn", "kubernetesVersion": "v1.31.1",
        "freeformTags": {"capi-managed-oke": "team-a_prod"}, "type": "ENHANCED_CLUSTER"})),
    ("PUT", f"{CE}/nodePools/ocid1.nodepool.oc1.iad.aaaaaaaapool", json.dumps({"size": 3, "nodeConfigDetails": {"size": 3}})),
    ("POST", f"{CE}/clusters/ocid1.cluster.oc1.iad.aaaaaaaacluster/kubeconfig/content", json.dumps({"tokenVersion": "2.0.0", "endpoint": "PUBLIC_ENDPOINT"})),
    ("POST", f"{CORE}/vcns", ""),
    ("PUT", f"{CORE}/subnets/ocid1.subnet.oc1.iad.aaaaaaaasubnet?name=a%20b&x=%2F", json.dumps({"displayName": "nodés ✓"})),
]

vectors = []
for method, url, body in cases:
    headers = {"date": DATE, "accept": "application/json"}
    if body is not None:
        headers["content-type"] = "application/json"
    prepared = requests.Request(method, url, headers=headers, data=body).prepare()
    signer(prepared)
    vectors.append({
        "method": method,
        "url": url,
        "body": body,
        "headers": {k.lower(): v for k, v in prepared.headers.items()},
    })

json.dump({
    "sdk": f"oci {oci.__version__}",
    "tenancy": TENANCY,
    "user": USER,
    "fingerprint": FINGERPRINT,
    "privateKeyPkcs8": pkcs8,
    "privateKeyPkcs1": pkcs1,
    "vectors": vectors,
}, sys.stdout, indent=1, ensure_ascii=False)
print()
