// A short word from a small vocabulary (a tensor's dtype, its format) held as a pointer to the one
// copy of it the process keeps: a graph holds one per tensor, millions in a large model, and a word
// costs 8 bytes there instead of a string's 32. The copies are never freed; a process meets a few
// dozen distinct words. Safe to make from several threads.
#pragma once
#include <string>
#include <string_view>

namespace anec {

class Interned {
public:
  Interned() : word_(&none()) {}
  Interned(std::string_view word);
  Interned(const std::string &word) : Interned(std::string_view(word)) {}
  Interned(const char *word) : Interned(std::string_view(word)) {}

  const std::string &str() const { return *word_; }
  operator const std::string &() const { return *word_; }
  operator std::string_view() const { return *word_; }
  bool empty() const { return word_->empty(); }

  friend bool operator==(const Interned &a, const Interned &b) { return a.word_ == b.word_; }
  friend bool operator==(const Interned &a, std::string_view b) { return *a.word_ == b; }
  friend bool operator==(const Interned &a, const char *b) { return *a.word_ == b; }
  friend bool operator==(const Interned &a, const std::string &b) { return *a.word_ == b; }
  // A message's words: "tensor '" + t.name + "' (" + t.dtype + ")".
  friend std::string operator+(const std::string &a, const Interned &b) { return a + *b.word_; }

private:
  static const std::string &none();
  const std::string *word_;
};

} // namespace anec
