//! Reading manifest text (multi-document YAML, or JSON, which is YAML too) into JSON values
//! that remember where each field was written.
//!
//! Built on saphyr-parser's event stream rather than a serde deserializer, because the
//! checks need what serde forgets: every node's line and column, duplicate keys, and how
//! much an alias expands. Scalars resolve with the YAML 1.2 core schema (as the e2e host's
//! loader does); `<<` merge keys are honoured because Kubernetes' YAML reader honours them.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};

use crate::{InputError, SourceFile};

/// The largest document accepted: the apiserver's request body limit.
pub const MAX_DOCUMENT_BYTES: usize = 3 * 1024 * 1024;
/// How many nodes aliases may add to one file in total (a "billion laughs" file stops here).
pub const ALIAS_NODE_BUDGET: usize = 100_000;
/// How deeply collections may nest.
pub const MAX_DEPTH: usize = 128;

/// A 1-based line and column (columns count characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    fn of(span: &Span) -> Position {
        Position { line: span.start.line(), column: span.start.col() + 1 }
    }
}

/// Where a node and its children were written.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub position: Position,
    children: Children,
}

#[derive(Clone, Debug, PartialEq)]
enum Children {
    None,
    Sequence(Vec<Node>),
    /// Each entry: the key, where the key was written, and the value's node; sorted by key
    /// (keys are unique), so a mapping of thousands of keys is searched, not scanned.
    Mapping(Vec<(String, Position, Node)>),
}

/// The entry for `key` in a mapping's sorted entries.
fn entry<'n>(entries: &'n [(String, Position, Node)], key: &str) -> Option<&'n (String, Position, Node)> {
    entries.binary_search_by(|(k, _, _)| k.as_str().cmp(key)).ok().map(|i| &entries[i])
}

impl Node {
    fn leaf(position: Position) -> Node {
        Node { position, children: Children::None }
    }

    /// Where the field `path` (as rules write it: `spec.templates[0].name`, `labels[app]`)
    /// was written; a path that leads to nothing written gives its nearest written ancestor.
    /// A mapping entry is located at its key.
    pub fn locate(&self, path: &str) -> Position {
        let mut node = self;
        let mut at = self.position;
        for segment in path_segments(path) {
            let next = match &node.children {
                Children::Mapping(entries) => entry(entries, segment).map(|(_, key_at, child)| (*key_at, child)),
                Children::Sequence(items) => {
                    segment.parse::<usize>().ok().and_then(|i| items.get(i)).map(|child| (child.position, child))
                }
                Children::None => None,
            };
            match next {
                Some((position, child)) => {
                    at = position;
                    node = child;
                }
                None => break,
            }
        }
        at
    }

    /// The node of a direct mapping entry or sequence item, for re-rooting List items.
    fn child(&self, segment: &str) -> Option<&Node> {
        match &self.children {
            Children::Mapping(entries) => entry(entries, segment).map(|(_, _, n)| n),
            Children::Sequence(items) => segment.parse::<usize>().ok().and_then(|i| items.get(i)),
            Children::None => None,
        }
    }
}

/// Splits `spec.tfReplicaSpecs[Worker].template` into `spec`, `tfReplicaSpecs`, `Worker`,
/// `template`. Bracketed keys may hold dots (`labels[topology.kubernetes.io/zone]`).
pub fn path_segments(path: &str) -> Vec<&str> {
    let mut segments = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            segments.push(&inner[..end]);
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            let rest_trimmed = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_trimmed.find(['.', '[']).unwrap_or(rest_trimmed.len());
            if end > 0 {
                segments.push(&rest_trimmed[..end]);
            }
            rest = &rest_trimmed[end..];
        }
    }
    segments
}

/// One document of a file (or one item of a `List` document).
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// 0-based index of the document in its file.
    pub index: usize,
    /// For an item of a `List`: its index in `items`.
    pub item: Option<usize>,
    pub value: Value,
    pub node: Node,
}

impl Document {
    pub fn position(&self) -> Position {
        self.node.position
    }
}

/// Reads every document of `file`. Empty documents are left out; `List` documents are
/// expanded into their items (which inherit the list's apiVersion and kind when they
/// leave them out).
pub fn read_documents(file: &SourceFile) -> Result<Vec<Document>, InputError> {
    let mut documents = Vec::new();
    for (index, (value, node)) in parse(file)?.into_iter().enumerate() {
        let Some(value) = value.filter(|v| !v.is_null()) else { continue };
        match list_items(&value) {
            Some(item_kind) => {
                let items = value["items"].as_array().cloned().unwrap_or_default();
                let items_node = node.child("items");
                for (i, mut item) in items.into_iter().enumerate() {
                    let item_node =
                        items_node.and_then(|n| n.child(&i.to_string())).cloned().unwrap_or_else(|| node.clone());
                    if let (Some(object), Some((api_version, kind))) = (item.as_object_mut(), &item_kind) {
                        object.entry("apiVersion").or_insert_with(|| Value::from(api_version.as_str()));
                        object.entry("kind").or_insert_with(|| Value::from(kind.as_str()));
                    }
                    documents.push(Document { index, item: Some(i), value: item, node: item_node });
                }
            }
            None => documents.push(Document { index, item: None, value, node }),
        }
    }
    Ok(documents)
}

/// `Some` for a `List` / `<Kind>List` document with an `items` array: the apiVersion and kind
/// its items have when they leave theirs out (none for a plain `List`).
fn list_items(value: &Value) -> Option<Option<(String, String)>> {
    let kind = value["kind"].as_str()?;
    if !value["items"].is_array() || !kind.ends_with("List") {
        return None;
    }
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    Some(item_kind.map(|k| (api_version.to_string(), k.to_string())))
}

/// A collection being built.
struct Frame {
    start: Position,
    anchor: usize,
    /// Nodes in this collection, itself included (what an alias to it costs).
    size: usize,
    body: Body,
}

enum Body {
    Sequence(Vec<Value>, Vec<Node>),
    Mapping {
        values: Map<String, Value>,
        nodes: Vec<(String, Position, Node)>,
        /// The key read, waiting for its value.
        key: Option<(String, Position)>,
        /// Mappings named by `<<` keys, applied under the explicit keys at the end.
        merges: Vec<(Value, Node)>,
    },
}

struct Builder<'f> {
    file: &'f SourceFile,
    stack: Vec<Frame>,
    anchors: HashMap<usize, (Value, Node, usize)>,
    alias_nodes: usize,
    documents: Vec<(Option<Value>, Node)>,
    root: Option<(Value, Node)>,
    document_start: usize,
    bytes: ByteCounter<'f>,
}

/// Turns the parser's character offsets into byte counts, walking the text once.
struct ByteCounter<'a> {
    text: &'a str,
    chars: usize,
    bytes: usize,
}

impl ByteCounter<'_> {
    fn byte_offset(&mut self, char_index: usize) -> usize {
        if self.text.len() <= MAX_DOCUMENT_BYTES {
            return char_index; // cannot exceed the limit; no need to be exact
        }
        if char_index < self.chars {
            self.chars = 0;
            self.bytes = 0;
        }
        let advance: usize = self.text[self.bytes..].chars().take(char_index - self.chars).map(char::len_utf8).sum();
        self.chars = char_index;
        self.bytes += advance;
        self.bytes
    }
}

fn parse(file: &SourceFile) -> Result<Vec<(Option<Value>, Node)>, InputError> {
    let mut builder = Builder {
        file,
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
        documents: Vec::new(),
        root: None,
        document_start: 0,
        bytes: ByteCounter { text: &file.text, chars: 0, bytes: 0 },
    };
    for event in Parser::new_from_str(&file.text) {
        let (event, span) = event.map_err(|e| InputError {
            file: file.name.clone(),
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: format!("not valid YAML: {}", e.info()),
        })?;
        builder.event(event, span)?;
    }
    Ok(builder.documents)
}

impl Builder<'_> {
    fn error(&self, at: Position, message: String) -> InputError {
        InputError { file: self.file.name.clone(), line: at.line, column: at.column, message }
    }

    fn event(&mut self, event: Event, span: Span) -> Result<(), InputError> {
        let at = Position::of(&span);
        match event {
            Event::DocumentStart(_) => {
                self.root = None;
                self.anchors.clear();
                self.document_start = self.bytes.byte_offset(span.start.index());
            }
            Event::DocumentEnd => {
                let end = self.bytes.byte_offset(span.end.index());
                let size = end.saturating_sub(self.document_start);
                let root = self.root.take();
                if size > MAX_DOCUMENT_BYTES {
                    let at = root.as_ref().map_or(at, |(_, n)| n.position);
                    return Err(self.error(
                        at,
                        format!(
                            "document is {:.1} MiB, over the 3 MiB the Kubernetes API accepts",
                            size as f64 / (1024.0 * 1024.0)
                        ),
                    ));
                }
                self.documents.push(match root {
                    Some((value, node)) => (Some(value), node),
                    None => (None, Node::leaf(at)),
                });
            }
            Event::Scalar(text, style, anchor, tag) => {
                if let Some(Frame { body: Body::Mapping { key: key @ None, .. }, .. }) = self.stack.last_mut() {
                    *key = Some((text.into_owned(), at));
                    return Ok(());
                }
                let value = resolve_scalar(&text, style, tag.as_deref()).map_err(|e| self.error(at, e))?;
                self.complete(value, Node::leaf(at), 1, anchor)?;
            }
            Event::Alias(id) => {
                let Some((value, _, size)) = self.anchors.get(&id) else {
                    return Err(self.error(at, "alias to an unknown anchor".into()));
                };
                self.alias_nodes += size;
                if self.alias_nodes > ALIAS_NODE_BUDGET {
                    return Err(self.error(
                        at,
                        format!("aliases expand to more than {ALIAS_NODE_BUDGET} nodes; refusing to expand further"),
                    ));
                }
                let (value, size) = (value.clone(), *size);
                if self.expecting_key() {
                    return Err(self.error(at, "a mapping key must be a plain value, not an alias".into()));
                }
                self.complete(value, Node::leaf(at), size, 0)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.expecting_key() {
                    return Err(self.error(at, "a mapping key must be a plain value, not a collection".into()));
                }
                if self.stack.len() >= MAX_DEPTH {
                    return Err(self.error(at, format!("nested more than {MAX_DEPTH} levels deep")));
                }
                let body = if matches!(event, Event::SequenceStart(..)) {
                    Body::Sequence(Vec::new(), Vec::new())
                } else {
                    Body::Mapping { values: Map::new(), nodes: Vec::new(), key: None, merges: Vec::new() }
                };
                self.stack.push(Frame { start: at, anchor, size: 1, body });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = self.stack.pop() else { return Ok(()) };
                let (value, node) = match frame.body {
                    Body::Sequence(values, nodes) => {
                        (Value::Array(values), Node { position: frame.start, children: Children::Sequence(nodes) })
                    }
                    Body::Mapping { mut values, mut nodes, merges, .. } => {
                        for (merged, merged_node) in merges {
                            apply_merge(&mut values, &mut nodes, merged, merged_node);
                        }
                        nodes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                        (Value::Object(values), Node { position: frame.start, children: Children::Mapping(nodes) })
                    }
                };
                self.complete(value, node, frame.size, frame.anchor)?;
            }
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
        }
        Ok(())
    }

    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame { body: Body::Mapping { key: None, .. }, .. }))
    }

    /// A value is complete: remember its anchor and put it in its parent (or make it the root).
    fn complete(&mut self, value: Value, node: Node, size: usize, anchor: usize) -> Result<(), InputError> {
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), node.clone(), size));
        }
        let file = &self.file.name;
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some((value, node));
            return Ok(());
        };
        parent.size += size;
        match &mut parent.body {
            Body::Sequence(values, nodes) => {
                values.push(value);
                nodes.push(node);
            }
            Body::Mapping { values, nodes, key, merges } => {
                let Some((key, key_at)) = key.take() else { return Ok(()) };
                if key == "<<" && (value.is_object() || value.is_array()) {
                    merges.push((value, node));
                    return Ok(());
                }
                // The map answers whether the key repeats; the entries (in the order written
                // until the mapping ends) are searched only to say where it was first.
                if values.contains_key(&key)
                    && let Some((_, first, _)) = nodes.iter().find(|(k, _, _)| *k == key)
                {
                    return Err(InputError {
                        file: file.clone(),
                        line: key_at.line,
                        column: key_at.column,
                        message: format!(
                            "duplicate key {key:?} (first at line {}, column {})",
                            first.line, first.column
                        ),
                    });
                }
                values.insert(key.clone(), value);
                nodes.push((key, key_at, node));
            }
        }
        Ok(())
    }
}

/// `<<: *base` (or a list of them): the merged mapping's keys, under the explicit ones.
fn apply_merge(values: &mut Map<String, Value>, nodes: &mut Vec<(String, Position, Node)>, merged: Value, node: Node) {
    match merged {
        Value::Object(map) => {
            let child_nodes = match node.children {
                Children::Mapping(n) => n,
                _ => Vec::new(),
            };
            for (key, value) in map {
                if values.contains_key(&key) {
                    continue;
                }
                let (key_at, child) = entry(&child_nodes, &key)
                    .map(|(_, at, n)| (*at, n.clone()))
                    .unwrap_or((node.position, Node::leaf(node.position)));
                values.insert(key.clone(), value);
                nodes.push((key, key_at, child));
            }
        }
        Value::Array(items) => {
            let item_nodes = match node.children {
                Children::Sequence(n) => n,
                _ => Vec::new(),
            };
            for (i, item) in items.into_iter().enumerate() {
                let item_node = item_nodes.get(i).cloned().unwrap_or(Node::leaf(node.position));
                apply_merge(values, nodes, item, item_node);
            }
        }
        _ => {}
    }
}

/// The YAML 1.2 core schema: plain scalars may be null, booleans or numbers; quoted and
/// block scalars are strings; `!!str`, `!!int`, `!!float`, `!!bool` and `!!null` force a type.
fn resolve_scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    if let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) {
        let forced = match tag.suffix.as_str() {
            "str" => Some(Value::from(text)),
            "null" => Some(Value::Null),
            "bool" => Some(bool_value(text).ok_or_else(|| format!("{text:?} is not a !!bool"))?),
            "int" => Some(int_value(text).ok_or_else(|| format!("{text:?} is not an !!int"))?),
            "float" => Some(float_value(text).ok_or_else(|| format!("{text:?} is not a !!float"))?),
            _ => None,
        };
        if let Some(value) = forced {
            return Ok(value);
        }
    }
    if style != ScalarStyle::Plain || tag.is_some_and(|t| t.handle == "!" && t.suffix.is_empty()) {
        return Ok(Value::from(text));
    }
    Ok(match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        _ => bool_value(text).or_else(|| int_value(text)).or_else(|| float_value(text)).unwrap_or(Value::from(text)),
    })
}

fn bool_value(text: &str) -> Option<Value> {
    match text {
        "true" | "True" | "TRUE" => Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => Some(Value::Bool(false)),
        _ => None,
    }
}

fn int_value(text: &str) -> Option<Value> {
    let (radix, digits) = if let Some(hex) = text.strip_prefix("0x") {
        (16, hex)
    } else if let Some(octal) = text.strip_prefix("0o") {
        (8, octal)
    } else {
        let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
        if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        return text
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| text.trim_start_matches('+').parse::<u64>().ok().map(Value::from))
            .or_else(|| float_value(text));
    };
    if digits.is_empty() {
        return None;
    }
    i64::from_str_radix(digits, radix)
        .map(Value::from)
        .ok()
        .or_else(|| u64::from_str_radix(digits, radix).ok().map(Value::from))
}

/// Finite floats only: JSON has no infinity or NaN, so `.inf` and `.nan` stay strings.
fn float_value(text: &str) -> Option<Value> {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = (!whole.is_empty() || !fraction.is_empty()) && digits(whole) && digits(fraction);
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    if !mantissa_ok || !exponent_ok {
        return None;
    }
    text.parse::<f64>().ok().and_then(Number::from_f64).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(text: &str) -> SourceFile {
        SourceFile { name: "m.yaml".into(), text: text.into() }
    }

    fn values(text: &str) -> Vec<Value> {
        read_documents(&file(text)).unwrap().into_iter().map(|d| d.value).collect()
    }

    fn error(text: &str) -> String {
        read_documents(&file(text)).unwrap_err().to_string()
    }

    #[test]
    fn reads_multiple_documents_and_skips_empty_ones() {
        let docs = read_documents(&file("a: 1\n---\n---\n# only a comment\n---\nb: [x, 'y']\n")).unwrap();
        assert_eq!(docs.iter().map(|d| d.index).collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(docs[1].value, json!({"b": ["x", "y"]}));
        assert_eq!(docs[1].position(), Position { line: 6, column: 1 });
    }

    #[test]
    fn resolves_scalars_with_the_core_schema() {
        let v = &values(
            "a: 1\nb: -2\nc: 1.5\nd: true\ne: ~\nf: '1'\ng: yes\nh: 0x10\ni: !!str 3\nj: 1e3\nk: .inf\nl: 01\nm: \"\"\n",
        )[0];
        assert_eq!(
            v,
            &json!({"a": 1, "b": -2, "c": 1.5, "d": true, "e": null, "f": "1", "g": "yes", "h": 16, "i": "3",
                    "j": 1000.0, "k": ".inf", "l": 1, "m": ""})
        );
    }

    #[test]
    fn reads_json() {
        let docs = read_documents(&file("{\"kind\": \"Pod\",\n \"spec\": {\"x\": [1, 2]}}")).unwrap();
        assert_eq!(docs[0].value, json!({"kind": "Pod", "spec": {"x": [1, 2]}}));
        assert_eq!(docs[0].node.locate("spec.x[1]"), Position { line: 2, column: 20 });
    }

    #[test]
    fn locates_fields_and_their_nearest_ancestor() {
        let text = "kind: PodGroup\nspec:\n  schedulingPolicy:\n    gang:\n      minCount: 0\n  templates:\n  - name: a\n  - name: b\nmetadata:\n  labels:\n    topology.kubernetes.io/zone: a\n";
        let doc = &read_documents(&file(text)).unwrap()[0];
        let at = |p: &str| {
            let pos = doc.node.locate(p);
            (pos.line, pos.column)
        };
        assert_eq!(at("spec.schedulingPolicy.gang.minCount"), (5, 7));
        assert_eq!(at("spec.schedulingPolicy.gang.minCount.deeper"), (5, 7));
        assert_eq!(at("spec.schedulingPolicy.basic"), (3, 3));
        assert_eq!(at("spec.templates[1].name"), (8, 5));
        assert_eq!(at("spec.templates[1]"), (8, 5));
        assert_eq!(at("spec.templates[7].name"), (6, 3));
        assert_eq!(at("metadata.labels[topology.kubernetes.io/zone]"), (11, 5));
        assert_eq!(at(""), (1, 1));
    }

    #[test]
    fn splits_paths() {
        assert_eq!(path_segments("spec.a[Worker].b[0]"), vec!["spec", "a", "Worker", "b", "0"]);
        assert_eq!(path_segments("labels[x.io/y]"), vec!["labels", "x.io/y"]);
    }

    #[test]
    fn expands_lists() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n}\n";
        let docs = read_documents(&file(text)).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!((docs[1].item, docs[1].value["kind"].as_str()), (Some(1), Some("Node")));
        assert_eq!(docs[1].position(), Position { line: 5, column: 3 });
        let typed = read_documents(&file("apiVersion: v1\nkind: NodeList\nitems:\n- metadata: {name: n}\n")).unwrap();
        assert_eq!(typed[0].value, json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}));
    }

    #[test]
    fn rejects_duplicate_keys_with_both_positions() {
        assert_eq!(
            error("metadata:\n  name: a\n  labels: {}\n  name: b\n"),
            "m.yaml:4:3: duplicate key \"name\" (first at line 2, column 3)"
        );
    }

    #[test]
    fn reports_syntax_errors_with_a_position() {
        let e = error("a: 1\nb: [1, 2\n");
        assert!(e.starts_with("m.yaml:3:1: not valid YAML: "), "{e}");
    }

    #[test]
    fn honours_anchors_and_merge_keys() {
        let v = &values("base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  y: 3\nlist: [*b]\n")[0];
        assert_eq!(v["use"], json!({"x": 1, "y": 3}));
        assert_eq!(v["list"], json!([{"x": 1, "y": 2}]));
    }

    #[test]
    fn locates_keys_written_in_any_order_and_merged_ones() {
        let text =
            "base: &b {zeta: 1, alpha: 2}\nuse:\n  <<: *b\n  mid: 3\n  alpha: 4\ninline:\n  <<: {zeta: 5, beta: 6}\n";
        let doc = &read_documents(&file(text)).unwrap()[0];
        let at = |p: &str| {
            let pos = doc.node.locate(p);
            (pos.line, pos.column)
        };
        assert_eq!(at("use.alpha"), (5, 3), "the explicit key wins over the merged one");
        assert_eq!(at("use.mid"), (4, 3));
        assert_eq!(at("use.zeta"), (3, 7), "a merged key is at the alias that brought it in");
        assert_eq!(at("base.alpha"), (1, 20));
        assert_eq!(at("use.omega"), (2, 1));
        assert_eq!(at("inline.zeta"), (7, 8), "a key merged from a mapping written in place is where it was written");
        assert_eq!(at("inline.beta"), (7, 17));
    }

    #[test]
    fn stops_alias_bombs() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let prev = i - 1;
            text.push_str(&format!("a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"));
        }
        let e = error(&text);
        assert!(e.contains("aliases expand to more than 100000 nodes"), "{e}");
        assert!(e.starts_with("m.yaml:5:45: "), "{e}");
    }

    #[test]
    fn limits_nesting() {
        let text = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(error(&text), "m.yaml:1:129: nested more than 128 levels deep");
    }

    #[test]
    fn limits_document_size() {
        let big = "x".repeat(1024);
        let mut text = String::from("kind: ConfigMap\ndata:\n");
        for i in 0..4 * 1024 {
            text.push_str(&format!("  k{i}: {big}\n"));
        }
        text.push_str("---\nkind: Small\n");
        assert_eq!(error(&text), "m.yaml:1:1: document is 4.0 MiB, over the 3 MiB the Kubernetes API accepts");
        let small = format!("kind: ConfigMap\ndata:\n  a: {big}\n");
        assert_eq!(values(&small).len(), 1);
    }

    #[test]
    fn non_string_keys_keep_their_text() {
        assert_eq!(values("1: a\ntrue: b\n")[0], json!({"1": "a", "true": "b"}));
    }
}
