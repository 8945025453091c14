//! The small XML reader EC2's responses need: elements, text and the five predefined entities.

/// An XML element: its local name, child elements and concatenated text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    /// The name without namespace prefix.
    pub name: String,
    /// Child elements in order.
    pub children: Vec<Element>,
    /// The element's own text (entities decoded), child text excluded.
    pub text: String,
}

impl Element {
    /// Direct children named `name`.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The element reached by following direct children named by `path`.
    pub fn path(&self, path: &[&str]) -> Option<&Element> {
        let mut here = self;
        for step in path {
            here = here.children.iter().find(|c| c.name == *step)?;
        }
        Some(here)
    }

    /// The trimmed text at `path`, empty when absent.
    pub fn text_at(&self, path: &[&str]) -> String {
        self.path(path)
            .map(|e| e.text.trim().to_string())
            .unwrap_or_default()
    }

    /// Every element named `name` at any depth, document order.
    pub fn descendants<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        let mut stack: Vec<&Element> = self.children.iter().rev().collect();
        std::iter::from_fn(move || {
            while let Some(e) = stack.pop() {
                stack.extend(e.children.iter().rev());
                if e.name == name {
                    return Some(e);
                }
            }
            None
        })
    }
}

/// Parses an XML document into its root element.
///
/// # Errors
/// On unbalanced or truncated markup.
pub fn parse(xml: &str) -> Result<Element, String> {
    let mut stack: Vec<Element> = vec![Element::default()];
    let mut rest = xml;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("<?") {
            rest = after
                .find("?>")
                .map(|i| &after[i + 2..])
                .ok_or("unterminated declaration")?;
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = after
                .find("-->")
                .map(|i| &after[i + 3..])
                .ok_or("unterminated comment")?;
        } else if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>").ok_or("unterminated CDATA")?;
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&after[..end]);
            }
            rest = &after[end + 3..];
        } else if let Some(after) = rest.strip_prefix("<!") {
            rest = after
                .find('>')
                .map(|i| &after[i + 1..])
                .ok_or("unterminated doctype")?;
        } else if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>').ok_or("unterminated end tag")?;
            let name = local(after[..end].trim());
            let done = stack.pop().ok_or("unbalanced end tag")?;
            if done.name != name || stack.is_empty() {
                return Err(format!("end tag </{name}> does not close <{}>", done.name));
            }
            if let Some(parent) = stack.last_mut() {
                parent.children.push(done);
            }
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('<') {
            let end = after.find('>').ok_or("unterminated start tag")?;
            let tag = &after[..end];
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let name = local(tag.split_whitespace().next().unwrap_or_default());
            let element = Element {
                name: name.to_string(),
                ..Element::default()
            };
            if self_closing {
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(element);
                }
            } else {
                stack.push(element);
            }
            rest = &after[end + 1..];
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            if let Some(top) = stack.last_mut() {
                top.text.push_str(&decode_entities(&rest[..end]));
            }
            rest = &rest[end..];
        }
    }
    if stack.len() != 1 {
        return Err("unclosed element".into());
    }
    let document = stack.pop().unwrap_or_default();
    document
        .children
        .into_iter()
        .next()
        .ok_or_else(|| "no root element".into())
}

fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_reads_nested_items_text_and_entities() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<RunInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>r-1</requestId>
  <instancesSet>
    <item>
      <instanceId>i-0123</instanceId>
      <placement><availabilityZone>us-west-2a</availabilityZone><tenancy/></placement>
      <privateDnsName>ip-10-0-1-5.us-west-2.compute.internal</privateDnsName>
      <tagSet><item><key>a&amp;b</key><value>c</value></item></tagSet>
    </item>
    <item><instanceId>i-0456</instanceId></item>
  </instancesSet>
</RunInstancesResponse>"#;
        let root = parse(xml).unwrap();
        assert_eq!(root.name, "RunInstancesResponse");
        let items: Vec<_> = root
            .path(&["instancesSet"])
            .unwrap()
            .children_named("item")
            .collect();
        assert_eq!(items.len(), 2);
        assert_eq!(
            items[0].text_at(&["placement", "availabilityZone"]),
            "us-west-2a"
        );
        assert_eq!(items[0].text_at(&["tagSet", "item", "key"]), "a&b");
        assert_eq!(items[1].text_at(&["privateDnsName"]), "");
        assert_eq!(root.descendants("instanceId").count(), 2);
    }

    #[test]
    fn unbalanced_markup_is_an_error() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("<a>").is_err());
        assert!(parse("").is_err());
    }
}
