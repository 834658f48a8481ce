#include "anec/support/print_behind.hpp"

#include "anec/support/error.hpp"
#include "anec/support/print_later.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

namespace anec {

namespace {
constexpr size_t kChunkBytes = 64 << 10; // a chunk handed over once it holds this much
constexpr size_t kQueued = 4;            // chunks handed over and not yet replayed, at most

enum class Call : char {
  Field,
  FieldWidth,
  Data,
  Text,
  TextFixed,
  Item,
  BeginObject,
  BeginList,
  End,
  InlineObject,
  Later
};
enum class Kind : char { String, Bool, Int, Uint, Double, Hex, Named, Doc };

template <class T> void put(PrintBehind::Chunk &c, const T &v) {
  PackedSize size;
  size.put(v);
  PackedWriter{c.room(size.n)}.put(v);
}

// A chunk's calls read back in order.
class Calls : public PackedReader {
public:
  explicit Calls(const PrintBehind::Chunk &c) : PackedReader(c.calls.get()), c_(c) {}
  bool done() const { return at() == c_.calls.get() + c_.size; }
  std::string_view text() { return get<std::string_view>(); }
  Scalar scalar() {
    switch (get<Kind>()) {
    case Kind::String:
      return text();
    case Kind::Bool:
      return get<bool>();
    case Kind::Int:
      return get<int64_t>();
    case Kind::Uint:
      return get<uint64_t>();
    case Kind::Double:
      return get<double>();
    case Kind::Hex:
      return get<Hex>();
    case Kind::Named: {
      std::string_view name = text();
      return Named{name, get<int64_t>()};
    }
    case Kind::Doc:
      return c_.docs[get<uint64_t>()];
    }
    throw Error("ANEC-INTERNAL", "a recorded printer call holds an unknown kind of value");
  }

private:
  const PrintBehind::Chunk &c_;
};

// The calls of `c`, made on its printer.
void replay(const PrintBehind::Chunk &c) {
  Printer &p = *c.target;
  Calls calls(c);
  while (!calls.done()) {
    switch (calls.get<Call>()) {
    case Call::Field: {
      std::string_view key = calls.text();
      p.field(key, calls.scalar());
      break;
    }
    case Call::FieldWidth: {
      std::string_view key = calls.text();
      Scalar v = calls.scalar();
      p.field(key, v, calls.get<int>());
      break;
    }
    case Call::Data: {
      std::string_view key = calls.text();
      p.data(key, calls.scalar());
      break;
    }
    case Call::Text:
      p.text(calls.text());
      break;
    case Call::TextFixed: {
      auto v = calls.get<double>();
      p.text_fixed(v, calls.get<int>());
      break;
    }
    case Call::Item:
      p.item(calls.scalar());
      break;
    case Call::BeginObject:
      p.begin_object(calls.text());
      break;
    case Call::BeginList:
      p.begin_list(calls.text());
      break;
    case Call::End:
      p.end();
      break;
    case Call::InlineObject:
      p.inline_object();
      break;
    case Call::Later:
      calls.get<Printer::Replay>()(p, calls); // the row's fields, read on from the call
      break;
    }
  }
}
} // namespace

// A printer that records its calls into a chunk for its target, handing each full chunk over. The
// calls the target's form ignores (TextPrinter: data and nesting; JsonPrinter: text) are dropped.
class PrintBehind::Recorder : public Printer {
public:
  Recorder(PrintBehind &behind, Printer &target) : behind_(behind), form_(target.form()) {
    chunk_.target = &target;
  }
  void field(std::string_view key, const Scalar &v) override { keyed(Call::Field, key, v); }
  void field(std::string_view key, const Scalar &v, int width) override {
    keyed(Call::FieldWidth, key, v);
    put(chunk_, width);
  }
  void data(std::string_view key, const Scalar &v) override {
    if (form_ != Form::Text)
      keyed(Call::Data, key, v);
  }
  void text(std::string_view words) override {
    if (form_ == Form::Json)
      return;
    call(Call::Text);
    put(chunk_, words);
  }
  void text_fixed(double v, int digits) override {
    if (form_ != Form::Text)
      return;
    call(Call::TextFixed);
    put(chunk_, v);
    put(chunk_, digits);
  }
  void item(const Scalar &v) override {
    next_chunk_if_full();
    record(chunk_, char(Call::Item), nullptr, v);
  }
  void begin_object(std::string_view key) override { nest(Call::BeginObject, key); }
  void begin_list(std::string_view key) override { nest(Call::BeginList, key); }
  void end() override {
    if (form_ != Form::Text)
      call(Call::End);
  }
  void inline_object() override { call(Call::InlineObject); }
  char *later(Replay replay, size_t n) override {
    next_chunk_if_full();
    PackedWriter out{chunk_.room(sizeof(Call) + sizeof replay + n)};
    out.put(Call::Later);
    out.put(replay);
    return out.at;
  }
  void columns(const std::vector<std::string> &) override {
    throw Error("ANEC-INTERNAL", "a printer's columns are not recorded to be printed behind");
  }
  Form form() const override { return form_; }
  Chunk &chunk() { return chunk_; }

private:
  // A new chunk once this one is full (a call is never split).
  void next_chunk_if_full() {
    if (chunk_.size >= kChunkBytes)
      behind_.hand_over(chunk_);
  }
  void call(Call c) {
    next_chunk_if_full();
    put(chunk_, c);
  }
  void keyed(Call c, std::string_view key, const Scalar &v) {
    next_chunk_if_full();
    std::string_view shown = form_ == Form::Text ? std::string_view() : key; // the text form shows none
    record(chunk_, char(c), &shown, v);
  }
  void nest(Call c, std::string_view key) {
    if (form_ == Form::Text)
      return;
    call(c);
    put(chunk_, key);
  }

  PrintBehind &behind_;
  Form form_;
  Chunk chunk_;
};

void PrintBehind::Chunk::grow(size_t at_least) {
  size_t n = std::max({at_least, 2 * capacity, kChunkBytes + 256});
  auto bigger = std::make_unique_for_overwrite<char[]>(n);
  if (size)
    std::memcpy(bigger.get(), calls.get(), size);
  calls = std::move(bigger);
  capacity = n;
}

void PrintBehind::record(Chunk &chunk, char call, const std::string_view *key, const Scalar &v) {
  std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        // The call's code, its key, the value's kind and the value; sized, then written in one piece.
        auto encode = [&](auto &out) {
          out.put(call);
          if (key)
            out.put(*key);
          if constexpr (std::is_same_v<T, std::string_view>) {
            out.put(Kind::String);
            out.put(x);
          } else if constexpr (std::is_same_v<T, const Doc *>) {
            out.put(Kind::Doc);
            out.put(uint64_t(chunk.docs.size()));
          } else if constexpr (std::is_same_v<T, Named>) {
            out.put(Kind::Named);
            out.put(x.name);
            out.put(x.value);
          } else {
            constexpr Kind kind = std::is_same_v<T, bool>       ? Kind::Bool
                                  : std::is_same_v<T, int64_t>  ? Kind::Int
                                  : std::is_same_v<T, uint64_t> ? Kind::Uint
                                  : std::is_same_v<T, double>   ? Kind::Double
                                                                : Kind::Hex;
            out.put(kind);
            out.put(x);
          }
        };
        PackedSize size;
        encode(size);
        PackedWriter w{chunk.room(size.n)};
        encode(w);
        if constexpr (std::is_same_v<T, const Doc *>)
          chunk.docs.push_back(*x);
      },
      v.v_);
}

PrintBehind::PrintBehind() = default;

PrintBehind::~PrintBehind() {
  stop();
}

void PrintBehind::stop() {
  std::unique_lock lock(mutex_);
  stop_ = true;
  queue_.clear();
  changed_.wait(lock, [&] { return posted_ == done_; }); // a chunk being replayed is finished
}

bool PrintBehind::handed_over() {
  std::lock_guard lock(mutex_);
  return posted_ > 0;
}

void PrintBehind::post(std::function<void()> job) {
  if (handed_over())
    jobs_.get().post(std::move(job));
  else
    job();
}

Printer &PrintBehind::recorder(Printer &target) {
  recorders_.push_back(std::make_unique<Recorder>(*this, target));
  return *recorders_.back();
}

void PrintBehind::hand_over(Chunk &chunk) {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < kQueued || error_ || stop_; });
    if (!error_ && !stop_) { // after an error nothing more is printed (drain() throws it), nor after stop()
      queue_.push_back(std::move(chunk));
      ++posted_;
      jobs_.get().post([this] { replay_next(); });
    }
  }
  chunk.calls.reset(); // moved, or dropped after an error
  chunk.capacity = 0;
  chunk.clear();
}

void PrintBehind::drain() {
  bool threaded = handed_over();
  for (const std::unique_ptr<Recorder> &r : recorders_) {
    if (r->chunk().size == 0)
      continue;
    if (threaded) {
      hand_over(r->chunk());
      continue;
    }
    replay(r->chunk());
    r->chunk().clear();
  }
  if (!threaded)
    return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return posted_ == done_ || error_; });
  if (error_)
    std::rethrow_exception(error_);
}

// The oldest chunk handed over, replayed (on the thread; nothing after stop() or an error).
void PrintBehind::replay_next() {
  std::unique_lock lock(mutex_);
  std::optional<Chunk> chunk;
  if (!stop_ && !error_ && !queue_.empty()) {
    chunk = std::move(queue_.front());
    queue_.pop_front();
  }
  lock.unlock();
  changed_.notify_all(); // room in the queue
  std::exception_ptr error;
  if (chunk)
    try {
      replay(*chunk);
    } catch (...) {
      error = std::current_exception();
    }
  lock.lock();
  if (error && !error_) {
    error_ = error;
    queue_.clear();
  }
  ++done_;
  changed_.notify_all(); // under the lock: once done_ is counted, stop() may let this go
}

} // namespace anec
