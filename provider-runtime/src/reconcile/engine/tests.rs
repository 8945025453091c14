//! The unit tests of the kernel's engine: timing, retries, finalizers and status writes.

use super::*;

#[test]
fn the_resync_period_bounds_every_settled_wait() {
    let sync = Duration::from_secs(15);
    assert_eq!(next_look(Some(Duration::from_secs(900)), sync), sync);
    assert_eq!(
        next_look(Some(Duration::from_secs(2)), sync),
        Duration::from_secs(2)
    );
    assert_eq!(next_look(None, sync), sync);
}

#[test]
fn a_throttle_holds_the_whole_cluster_of_the_object() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    let labelled = ObjectMeta {
        namespace: Some("ns".into()),
        name: Some("pool-0".into()),
        labels: Some(
            [(
                contract::capi::CLUSTER_NAME_LABEL.to_string(),
                "c1".to_string(),
            )]
            .into(),
        ),
        ..ObjectMeta::default()
    };
    let owned = ObjectMeta {
        namespace: Some("ns".into()),
        name: Some("c1".into()),
        owner_references: Some(vec![OwnerReference {
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: "Cluster".into(),
            name: "c1".into(),
            uid: "u".into(),
            ..OwnerReference::default()
        }]),
        ..ObjectMeta::default()
    };
    let alone = ObjectMeta {
        namespace: Some("ns".into()),
        name: Some("c1".into()),
        ..ObjectMeta::default()
    };
    // A pool (by its label) and a control plane (by its owner) share their Cluster's hold.
    assert_eq!(hold_scope("AKSMachinePool", &labelled), "Cluster ns/c1");
    assert_eq!(hold_scope("AKSControlPlane", &owned), "Cluster ns/c1");
    assert_eq!(
        hold_scope("AKSControlPlane", &alone),
        "AKSControlPlane ns/c1"
    );
    let holds = Holds::default();
    holds.hold(
        &hold_scope("AKSControlPlane", &owned),
        Instant::now() + Duration::from_secs(3),
    );
    assert!(
        holds
            .held(&hold_scope("AKSMachinePool", &labelled))
            .is_some()
    );
    assert!(holds.held(&hold_scope("AKSControlPlane", &alone)).is_none());
}

#[test]
fn the_error_policy_matches_on_what_the_caller_should_do() {
    let r = Retries::default();
    let hour = Duration::from_secs(3600);
    // Throttled: what the cloud asked, however often, and not counted.
    let throttled = EngineError::Provider(ProviderError::throttled(
        "slow down",
        Some(Duration::from_secs(40)),
    ));
    for _ in 0..5 {
        let d = retry_delay_after(&throttled, &r, "ns/a", hour);
        assert!(
            d >= Duration::from_secs(40) && d <= Duration::from_secs(44),
            "{d:?}"
        );
    }
    assert_eq!(r.in_a_row("ns/a"), 0);
    // Held back by another pass's Retry-After: the time left, and no failure counted.
    let held = EngineError::Provider(ProviderError::held(
        "eks asked to wait",
        Duration::from_secs(2),
    ));
    for _ in 0..3 {
        let d = retry_delay_after(&held, &r, "ns/h", hour);
        assert!(
            d >= Duration::from_secs(2) && d <= Duration::from_millis(2500),
            "{d:?}"
        );
    }
    assert_eq!(r.in_a_row("ns/h"), 0);
    // The same failure again backs off; a failure of another kind starts over.
    let cloud = EngineError::Provider(ProviderError::cloud("cloud_5xx", "boom"));
    let first = retry_delay_after(&cloud, &r, "ns/b", hour);
    let second = retry_delay_after(&cloud, &r, "ns/b", hour);
    assert!(
        first <= Duration::from_secs(2) && second >= Duration::from_secs(2),
        "{first:?} {second:?}"
    );
    let timeout = EngineError::Provider(ProviderError::cloud("timeout", "slow"));
    assert!(retry_delay_after(&timeout, &r, "ns/b", hour) <= Duration::from_secs(2));
    let terminal = EngineError::Provider(ProviderError::terminal(
        contract::conditions::Reason::InvalidSpec,
        "bad",
    ));
    assert_eq!(
        retry_delay_after(&terminal, &r, "ns/b", hour),
        hour,
        "no hot loop on terminal errors"
    );
    assert_eq!(r.in_a_row("ns/b"), 0);
    let pending = EngineError::CleanupPending(Duration::from_secs(7));
    assert_eq!(
        retry_delay_after(&pending, &r, "ns/c", hour),
        Duration::from_secs(7)
    );
    assert_eq!(r.in_a_row("ns/c"), 0);
    // A conflict is retried at once, on the fresh copy.
    let kube = EngineError::Kube(kube::Error::Api(Box::new(kube::core::Status {
        code: 409,
        ..Default::default()
    })));
    assert!(retry_delay_after(&kube, &r, "ns/d", hour) < Duration::from_millis(250));
    assert_eq!(kube.category(), "kube_conflict");
}

#[test]
fn a_refused_finalizer_test_is_a_conflict_and_a_refused_field_is_not() {
    // What kube-apiserver answers a JSON patch whose `test` fails.
    let refused: kube::core::Status = serde_json::from_value(json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server rejected our request due to an error in our request",
        "reason": "Invalid", "details": {}, "code": 422
    }))
    .unwrap();
    let stale = finalizer_patch_error(kube::Error::Api(Box::new(refused.clone())));
    assert!(matches!(stale, EngineError::StaleFinalizer(_)), "{stale:?}");
    let without_details = kube::core::Status {
        details: None,
        ..refused
    };
    assert_eq!(
        finalizer_patch_error(kube::Error::Api(Box::new(without_details))).category(),
        "kube_conflict"
    );
    let status = |code, causes: serde_json::Value| {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            reason: "Invalid".into(),
            details: Some(serde_json::from_value(json!({ "causes": causes })).unwrap()),
            ..Default::default()
        }))
    };
    let stale = finalizer_patch_error(status(422, json!([])));
    assert!(matches!(stale, EngineError::StaleFinalizer(_)), "{stale:?}");
    assert_eq!(stale.category(), "kube_conflict");
    let r = Retries::default();
    assert!(
        retry_delay_after(&stale, &r, "ns/e", Duration::from_secs(3600))
            < Duration::from_millis(250)
    );
    let invalid = finalizer_patch_error(status(
        422,
        json!([{ "field": "metadata.finalizers", "message": "bad" }]),
    ));
    assert_eq!(invalid.category(), "kube_invalid");
    // A 422 that is not the API server's own Invalid (a webhook's, say) is not read as one.
    let other = kube::Error::Api(Box::new(kube::core::Status {
        code: 422,
        ..Default::default()
    }));
    assert_eq!(finalizer_patch_error(other).category(), "kube_invalid");
    assert_eq!(
        finalizer_patch_error(status(409, json!([]))).category(),
        "kube_conflict"
    );
}

#[test]
fn spec_fields_match_ignores_fields_the_provider_does_not_set() {
    let spec = json!({"version": "v1.31", "controlPlaneEndpoint": {"host": "h", "port": 443}});
    assert!(spec_fields_match(
        Some(&spec),
        &json!({"controlPlaneEndpoint": {"host": "h", "port": 443}})
    ));
    assert!(!spec_fields_match(
        Some(&spec),
        &json!({"controlPlaneEndpoint": {"host": "other", "port": 443}})
    ));
    assert!(!spec_fields_match(
        Some(&spec),
        &json!({"providerIDList": ["aws:///a"]})
    ));
    assert!(!spec_fields_match(None, &json!({"providerIDList": []})));
    assert!(spec_fields_match(Some(&spec), &json!({})));
    assert!(!spec_fields_match(Some(&spec), &json!("not an object")));
}

#[test]
fn status_only_changes_do_not_trigger_a_pass() {
    let mut a = contract::capi::Cluster::new("c", Default::default());
    a.metadata.generation = Some(1);
    let mut b = a.clone();
    b.status = Some(Default::default());
    b.metadata.resource_version = Some("42".into());
    assert_eq!(trigger_hash(&a), trigger_hash(&b));
    let mut c = a.clone();
    c.metadata.generation = Some(2);
    assert_ne!(trigger_hash(&a), trigger_hash(&c));
    let mut d = a.clone();
    d.metadata.finalizers = Some(vec!["f".into()]);
    assert_ne!(trigger_hash(&a), trigger_hash(&d));
    let mut e = a.clone();
    e.metadata.annotations = Some([("cluster.x-k8s.io/paused".to_string(), String::new())].into());
    assert_ne!(trigger_hash(&a), trigger_hash(&e));
}
