//! Whose a cloud resource is: one decision, used for every resource of every kind on every cloud.
//!
//! A provider meets an existing resource when it creates (a same-named cluster, node pool or
//! network resource), when it restarts (the resource it created before the crash), after
//! `clusterctl move`, and when it deletes. The answer is always read from the resource's tags
//! (labels on GCP) against the ownership tag of [`naming::ownership_tag`], never from object
//! UIDs, which do not survive a move:
//!
//! - tagged for this Cluster by this provider: [`Ownership::Ours`], carry on (idempotent restart);
//! - tagged by this provider for *another* Cluster: [`Ownership::Conflict`] naming that owner,
//!   whatever `spec.adoption` says (adoption takes a stranger's resource, never a sibling's);
//! - untagged, or tagged by someone else, with `spec.adoption`: [`Ownership::Adopt`] (the
//!   provider tags it and manages it from then on);
//! - otherwise [`Ownership::Conflict`] with no owner.
//!
//! Deletion deletes only what is [`Ownership::Ours`].

use std::collections::BTreeMap;

use crate::naming;

/// The Cluster a provider's cloud resources belong to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    provider: String,
    namespace: String,
    cluster: String,
}

/// What a provider may do with an existing cloud resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ownership {
    /// It carries this Cluster's ownership tag.
    Ours,
    /// It is not ours and the user asked to adopt it: tag it, then manage it.
    Adopt,
    /// It is not ours and must not be touched.
    Conflict(Conflict),
}

/// A resource that is not ours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The ownership tag value of the other Cluster (`<namespace>_<cluster>`) when this
    /// provider created it for another Cluster; `None` when it was not created by this provider.
    pub owner: Option<String>,
}

impl Conflict {
    /// A sentence for a condition or an event: what exists, whose it is, what the user can do.
    /// `what` names the resource in the cloud's words (e.g. "EKS cluster"), `name` is its name.
    pub fn message(&self, what: &str, name: &str) -> String {
        match &self.owner {
            Some(owner) => format!(
                "The {what} {name} already exists and belongs to another cluster (ownership tag {owner}); nothing was changed. Set spec.cloudName to use another name."
            ),
            None => format!(
                "The {what} {name} already exists and was not created by this provider; nothing was changed. Set spec.adoption to take it over, or spec.cloudName to use another name."
            ),
        }
    }
}

impl Owner {
    /// The Cluster `namespace/cluster`, for the provider named `provider` (`eks`, `aks`, …).
    pub fn new(
        provider: impl Into<String>,
        namespace: impl Into<String>,
        cluster: impl Into<String>,
    ) -> Self {
        Self {
            provider: provider.into(),
            namespace: namespace.into(),
            cluster: cluster.into(),
        }
    }

    /// The provider's short name.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The Cluster's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The Cluster's name.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// The ownership tag `(key, value)` of this Cluster's resources.
    pub fn tag(&self) -> (String, String) {
        naming::ownership_tag(&self.provider, &self.namespace, &self.cluster)
    }

    /// The tags every resource made for this Cluster carries: the user's `additional` tags,
    /// then the ownership tag (which wins; the CRD already refuses the reserved prefix).
    pub fn tags(&self, additional: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut tags = additional.clone();
        let (key, value) = self.tag();
        tags.insert(key, value);
        tags
    }

    /// Whether `tags` carry this Cluster's ownership tag exactly.
    pub fn owns(&self, tags: &BTreeMap<String, String>) -> bool {
        let (key, value) = self.tag();
        tags.get(&key) == Some(&value)
    }

    /// The decision for an existing resource carrying `tags`; `adopt` is the object's
    /// `spec.adopt`.
    pub fn decide(&self, tags: &BTreeMap<String, String>, adopt: bool) -> Ownership {
        if self.owns(tags) {
            return Ownership::Ours;
        }
        let owner = naming::ownership_tag_of(tags, &self.provider).map(str::to_string);
        match owner {
            None if adopt => Ownership::Adopt,
            owner => Ownership::Conflict(Conflict { owner }),
        }
    }

    /// A sentence for the event when deletion finds a resource that is not ours.
    pub fn left_in_place(&self, what: &str, name: &str) -> String {
        format!(
            "The {what} {name} is not tagged as belonging to {}/{}, so it was left in place",
            self.namespace, self.cluster
        )
    }
}

/// [`Owner::decide`] in one call: `ownership(tags, provider, namespace, cluster, adopt)`.
pub fn ownership(
    tags: &BTreeMap<String, String>,
    provider: &str,
    namespace: &str,
    cluster: &str,
    adopt: bool,
) -> Ownership {
    Owner::new(provider, namespace, cluster).decide(tags, adopt)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn tagged(owner: &Owner) -> BTreeMap<String, String> {
        owner.tags(&BTreeMap::from([("team".to_string(), "a".to_string())]))
    }

    #[test]
    fn a_resource_tagged_for_this_cluster_is_ours_whatever_adopt_says() {
        let me = Owner::new("eks", "ns", "c1");
        assert_eq!(me.decide(&tagged(&me), false), Ownership::Ours);
        assert_eq!(me.decide(&tagged(&me), true), Ownership::Ours);
    }

    #[test]
    fn a_resource_tagged_for_another_cluster_is_a_conflict_even_when_adopting() {
        let me = Owner::new("eks", "ns", "c1");
        let sibling = Owner::new("eks", "ns", "c2");
        for adopt in [false, true] {
            assert_eq!(
                me.decide(&tagged(&sibling), adopt),
                Ownership::Conflict(Conflict {
                    owner: Some("ns_c2".into())
                }),
                "adopt: {adopt}"
            );
        }
    }

    #[test]
    fn a_strangers_resource_is_adopted_only_when_asked() {
        let me = Owner::new("eks", "ns", "c1");
        let stranger = BTreeMap::from([("owner".to_string(), "someone".to_string())]);
        assert_eq!(me.decide(&stranger, true), Ownership::Adopt);
        assert_eq!(
            me.decide(&stranger, false),
            Ownership::Conflict(Conflict { owner: None })
        );
        // Another provider's tag does not make it a sibling's.
        let other_provider = Owner::new("aks", "ns", "c2").tags(&BTreeMap::new());
        assert_eq!(me.decide(&other_provider, true), Ownership::Adopt);
    }

    #[test]
    fn ownership_is_the_same_decision_in_one_call() {
        let me = Owner::new("gke", "ns", "c1");
        assert_eq!(
            ownership(&tagged(&me), "gke", "ns", "c1", false),
            Ownership::Ours
        );
        assert_eq!(
            ownership(&BTreeMap::new(), "gke", "ns", "c1", true),
            Ownership::Adopt
        );
    }

    #[test]
    fn the_ownership_tag_wins_over_a_user_tag_of_the_same_key() {
        let me = Owner::new("eks", "ns", "c1");
        let forged = BTreeMap::from([("capi-managed-eks".to_string(), "ns_c9".to_string())]);
        assert!(me.owns(&me.tags(&forged)));
    }

    #[test]
    fn conflict_messages_are_sentences_that_say_what_to_do() {
        let sibling = Conflict {
            owner: Some("ns_c2".into()),
        };
        let m = sibling.message("EKS cluster", "ns-c1");
        assert!(m.starts_with("The EKS cluster ns-c1 already exists"), "{m}");
        assert!(m.contains("ns_c2") && !m.contains("adopt"), "{m}");
        let stranger = Conflict { owner: None }.message("EKS node group", "ng");
        assert!(stranger.contains("spec.adoption"), "{stranger}");
        assert!(stranger.ends_with('.'), "{stranger}");
    }
}
