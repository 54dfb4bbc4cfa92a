// The guarded loader (see yaml_guard.hpp): a checking pass over yaml-cpp's events, then LoadAll.
#include "config/yaml_guard.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "messages/field_path.hpp"

namespace kas {

namespace {

// Why the checking pass stopped. Thrown from the event handler through yaml-cpp's parser, whose
// own errors are exceptions too, so it unwinds cleanly and parses nothing more.
struct stop {
  int document;       // 1-based
  std::string where;  // a field path, or "line L, column C"; may be empty
  std::string what;
  bool invalid;       // the text is not YAML at all (as opposed to a limit)
};

std::string at(const YAML::Mark& m) {
  return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1);
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b ? std::numeric_limits<std::uint64_t>::max() : a + b;
}

// Watches one stream's events and throws `stop` at the first limit crossed. Sizes and depths of
// anchored nodes are kept as numbers, so an alias costs the same whatever it expands to.
class checker : public YAML::EventHandler {
public:
  explicit checker(const yaml_limits& limits) : limits_(limits) {}

  // Documents started so far, and where each began (the offset of its first token).
  const std::vector<std::size_t>& starts() const { return starts_; }
  bool in_document() const { return in_document_; }

  // Called once the parser has no more documents: the last one runs to the end of the text.
  // (Offsets count the UTF-8 yaml-cpp reads, which can outrun the bytes of a UTF-16 file.)
  void finish(std::size_t text_size) {
    if (!starts_.empty() && text_size > starts_.back()) check_size(starts_.size(), text_size - starts_.back());
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    auto pos = static_cast<std::size_t>(mark.pos);
    size_t n = starts_.size();
    // The previous document consumed nothing: yaml-cpp 0.7 would return it again and again. The
    // token it left belongs to the document before it, if there is one (`a: 1` then `,` is one
    // document to whoever wrote it).
    if (n >= 1 && pos == starts_[n - 1])
      throw stop{std::max<int>(1, static_cast<int>(n) - 1), at(mark),
                 "the parser made no progress here (yaml-cpp 0.7 would loop forever)", true};
    if (n >= 1) check_size(n, pos - starts_[n - 1]);
    starts_.push_back(pos);
    in_document_ = true;
    frames_.clear();
    anchors_.clear();
    written_ = 0;
    alias_nodes_ = 0;
    first_over_.clear();
  }

  void OnDocumentEnd() override {
    in_document_ = false;
    std::uint64_t allowed = std::max(limits_.max_alias_nodes, written_);
    if (alias_nodes_ > allowed)
      throw stop{document(), first_over_,
                 "too many alias expansions (limit " + std::to_string(limits_.max_alias_nodes) +
                   " nodes, or as many as the document writes out)",
                 false};
  }

  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor, nullptr); }

  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    leaf(anchor, &value);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size()) return;  // yaml-cpp refuses an unknown anchor before this
    const anchored& a = anchors_[anchor];
    if (a.open) throw stop{document(), here(mark), "alias *" + a.name + " refers to a node that contains it", false};
    if (static_cast<int>(frames_.size()) + a.height > limits_.max_depth)
      throw stop{document(), at(mark),
                 "nesting deeper than " + std::to_string(limits_.max_depth) + " levels (through alias *" + a.name + ")",
                 false};
    alias_nodes_ = saturating_add(alias_nodes_, a.nodes);
    if (alias_nodes_ > limits_.max_alias_nodes && first_over_.empty()) first_over_ = here(mark);
    std::string key = "*" + a.name;
    add_child(a.nodes, a.height, &key);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnMapEnd() override { close(); }

  void OnAnchor(const YAML::Mark&, const std::string& name) override { anchor_name_ = name; }

private:
  struct anchored {
    std::uint64_t nodes = 0;  // the node and everything in it, aliases expanded
    int height = 0;           // levels of collections in it (a scalar: 0), aliases expanded
    bool open = false;        // a collection that has not ended: an alias to it would be a cycle
    std::string name;
  };

  // An open mapping or sequence.
  struct frame {
    bool map;
    YAML::anchor_t anchor;
    std::uint64_t nodes = 1;
    int height = 1;
    std::size_t children = 0;  // completed entries; a mapping counts keys and values
    std::string key;           // a mapping's latest key, for paths in errors
  };

  int document() const { return static_cast<int>(starts_.size()); }

  void check_size(std::size_t document, std::size_t bytes) const {
    if (limits_.max_document_bytes && bytes > limits_.max_document_bytes)
      throw stop{static_cast<int>(document), "",
                 "the document is " + std::to_string(bytes) + " bytes, more than the " +
                   mebibytes(limits_.max_document_bytes) + " allowed for one object (what the apiserver accepts)",
                 false};
  }

  // A node that carries an anchor starts: yaml-cpp numbers anchors 1, 2, ... in each document.
  void define(YAML::anchor_t anchor, anchored a) {
    if (anchor >= anchors_.size()) anchors_.resize(anchor + 1);
    a.name = anchor_name_;
    anchors_[anchor] = std::move(a);
  }

  void leaf(YAML::anchor_t anchor, const std::string* value) {
    ++written_;
    if (anchor != YAML::NullAnchor) define(anchor, anchored{1, 0, false, {}});
    add_child(1, 0, value);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool map) {
    ++written_;
    if (static_cast<int>(frames_.size()) >= limits_.max_depth)
      throw stop{document(), at(mark), "nesting deeper than " + std::to_string(limits_.max_depth) + " levels", false};
    if (anchor != YAML::NullAnchor) define(anchor, anchored{0, 0, true, {}});
    frames_.push_back(frame{map, anchor, 1, 1, 0, {}});
  }

  void close() {
    frame f = std::move(frames_.back());
    frames_.pop_back();
    if (f.anchor != YAML::NullAnchor) {
      anchored& a = anchors_[f.anchor];
      a.nodes = f.nodes;
      a.height = f.height;
      a.open = false;
    }
    add_child(f.nodes, f.height, nullptr);
  }

  // A node (of `nodes` nodes and `height` levels) completed inside the innermost open collection.
  void add_child(std::uint64_t nodes, int height, const std::string* key) {
    if (frames_.empty()) return;  // the document's root
    frame& f = frames_.back();
    f.nodes = saturating_add(f.nodes, nodes);
    f.height = std::max(f.height, height + 1);
    if (f.map && f.children % 2 == 0) f.key = key ? *key : "?";
    ++f.children;
  }

  // The field path of the node being read now ("metadata.labels.f[0]"), or its line and column.
  std::string here(const YAML::Mark& mark) const {
    std::string path;
    for (const frame& f : frames_) {
      if (!f.map) {
        path += "[" + std::to_string(f.children) + "]";
      } else if (f.children % 2 == 1) {
        path = field_path(path, f.key);
      } else {
        break;  // inside a key: the mapping's path is as close as a path gets
      }
    }
    return path.empty() ? at(mark) : path;
  }

  const yaml_limits& limits_;
  std::vector<std::size_t> starts_;
  bool in_document_ = false;
  std::vector<frame> frames_;
  std::vector<anchored> anchors_;  // by anchor id
  std::string anchor_name_;        // the name OnAnchor gave for the node that comes next
  std::uint64_t written_ = 0;      // nodes the document writes out
  std::uint64_t alias_nodes_ = 0;  // nodes it gains through aliases
  std::string first_over_;         // where alias_nodes_ first passed max_alias_nodes
};

std::string describe(const std::string& file, yaml_input input, const stop& s) {
  std::string out = file;
  if (input == yaml_input::stream && s.document > 0) out += ": document " + std::to_string(s.document);
  if (!s.where.empty()) out += ": " + s.where;
  if (s.invalid) out += std::string(": invalid ") + (input == yaml_input::json ? "JSON" : "YAML");
  return out + ": " + s.what;
}

stop parse_error(const YAML::Exception& e, yaml_input input, int document) {
  std::string where;
  // A workload file is one document, whose errors have always named only the line.
  if (!e.mark.is_null()) where = input == yaml_input::single ? "line " + std::to_string(e.mark.line + 1) : at(e.mark);
  return stop{document, where, e.msg, true};
}

}  // namespace

std::string mebibytes(std::size_t bytes) {
  double mib = static_cast<double>(bytes) / (1 << 20);
  char buf[32];
  std::snprintf(buf, sizeof buf, mib == static_cast<double>(static_cast<std::size_t>(mib)) ? "%.0f MiB" : "%.1f MiB",
                mib);
  return buf;
}

status_or_error read_bounded(std::istream& in, const std::string& file, std::size_t max, std::string& text) {
  text.clear();
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max)
      return error{file + ": the file is larger than " + mebibytes(max) + ", the most one input file may hold"};
  }
  if (in.bad()) return error{file + ": cannot read file: " + std::strerror(errno)};
  return ok_t{};
}

result<std::vector<yaml_document>> load_yaml(const std::string& file, const std::string& text, yaml_input input,
                                             const yaml_limits& limits) {
  checker c(limits);
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    try {
      while (parser.HandleNextDocument(c)) {
      }
      c.finish(text.size());
    } catch (const stop& s) {
      return error{describe(file, input, s)};
    } catch (const YAML::Exception& e) {
      // Between two documents the error is in the next one (its first token did not scan).
      int document = static_cast<int>(c.starts().size()) + (c.in_document() ? 0 : 1);
      return error{describe(file, input, parse_error(e, input, document))};
    }
  }
  std::vector<YAML::Node> roots;
  try {
    roots = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {  // not expected: the same parser accepted the same text above
    return error{describe(file, input, parse_error(e, input, 0))};
  }
  const auto& starts = c.starts();
  if (roots.size() != starts.size())
    return error{file + ": yaml-cpp read " + std::to_string(roots.size()) + " documents where its parser saw " +
                 std::to_string(starts.size())};
  std::vector<yaml_document> docs(roots.size());
  for (std::size_t i = 0; i < roots.size(); ++i) {
    docs[i].root = std::move(roots[i]);
    docs[i].begin = starts[i];
    docs[i].end = std::max(docs[i].begin, i + 1 < starts.size() ? starts[i + 1] : text.size());
  }
  return docs;
}

}  // namespace kas
