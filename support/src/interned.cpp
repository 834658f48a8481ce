#include "anec/support/interned.hpp"

#include <mutex>
#include <unordered_set>

namespace anec {

namespace {
struct Words {
  std::mutex lock;
  std::unordered_set<std::string> kept; // a node's string never moves
};
Words &words() {
  static Words *w = new Words; // never destroyed: a word may be read during another static's destruction
  return *w;
}
} // namespace

const std::string &Interned::none() {
  static const std::string none;
  return none;
}

Interned::Interned(std::string_view word) : word_(&none()) {
  if (word.empty())
    return;
  Words &w = words();
  std::lock_guard<std::mutex> hold(w.lock);
  word_ = &*w.kept.emplace(word).first;
}

} // namespace anec
