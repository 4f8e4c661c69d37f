#include "data/pair_reader.h"

#include <cstdlib>
#include <sys/stat.h>

#include "core/check.h"

namespace attn::data {

// One file read through stdio's buffer; getline() keeps just the current line in memory.
class PairReader::File {
 public:
  File(const std::string& path, int64_t offset) : path_(path) {
    file_ = std::fopen(path.c_str(), "rb");
    ATTN_CHECK(file_, "cannot open '", path, "'");
    std::setvbuf(file_, nullptr, _IOFBF, size_t(1) << 20);
    struct stat info {};
    ATTN_CHECK(fstat(fileno(file_), &info) == 0, "cannot read '", path, "'");
    ATTN_CHECK(offset <= info.st_size, "'", path, "' has ", info.st_size, " bytes, fewer than the ", offset,
               " already read from it: the file changed since the checkpoint was written");
    ATTN_CHECK(fseeko(file_, offset, SEEK_SET) == 0, "cannot seek in '", path, "'");
  }
  ~File() {
    std::free(line_);
    if (file_) std::fclose(file_);
  }

  // The next line without "\n" / "\r\n"; false at the end. Adds the bytes consumed to *offset.
  bool next(std::string& line, int64_t* offset) {
    const ssize_t length = getline(&line_, &capacity_, file_);
    if (length < 0) {
      ATTN_CHECK(!std::ferror(file_), "error while reading '", path_, "'");
      return false;
    }
    *offset += length;
    size_t size = size_t(length);
    if (size > 0 && line_[size - 1] == '\n') --size;
    if (size > 0 && line_[size - 1] == '\r') --size;
    line.assign(line_, size);
    return true;
  }

  bool at_end() {
    const int c = std::getc(file_);
    if (c == EOF) {
      ATTN_CHECK(!std::ferror(file_), "error while reading '", path_, "'");
      return true;
    }
    std::ungetc(c, file_);
    return false;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  char* line_ = nullptr;
  size_t capacity_ = 0;
};

PairReader::PairReader(const std::string& src_path, const std::string& tgt_path, PairReaderPosition start,
                       const std::string& links_path)
    : src_(std::make_unique<File>(src_path, start.src_offset)),
      tgt_(std::make_unique<File>(tgt_path, start.tgt_offset)),
      links_(links_path.empty() ? nullptr : std::make_unique<File>(links_path, start.links_offset)),
      position_(start) {
  // Past line 0 with no offset in the alignments file: a run resumed (or fine-tuned) with
  // data.train_alignments newly set, whose state never knew that file. Its links catch up with
  // the corpus here; starting them at the file's first line would pair every pair with another
  // pair's links. (A known offset is never 0 past line 0: each line holds at least its "\n".)
  if (links_ && start.line > 0 && start.links_offset == 0) {
    std::string skipped;
    for (int64_t line = 0; line < start.line; ++line)
      if (!links_->next(skipped, &position_.links_offset))
        throw Error("the alignments file '" + links_path + "' ends after line " + std::to_string(line) + " but '" +
                    src_path + "' has " + std::to_string(start.line) +
                    " lines before the position the run resumes at; it must align line by line with the corpus");
  }
}

PairReader::~PairReader() = default;
PairReader::PairReader(PairReader&&) noexcept = default;
PairReader& PairReader::operator=(PairReader&&) noexcept = default;

bool PairReader::check_ends_together(bool src_ended, bool tgt_ended, bool links_ended) const {
  if (links_ && links_ended != src_ended && src_ended == tgt_ended) {
    throw Error("the alignments file '" + links_->path() + "' " +
                (links_ended ? "ends after line " + std::to_string(position_.line) + " but '" + src_->path() +
                                   "' has a line " + std::to_string(position_.line + 1)
                             : "has a line " + std::to_string(position_.line + 1) + " but '" + src_->path() +
                                   "' ends after line " + std::to_string(position_.line)) +
                "; it must align line by line with the corpus");
  }
  if (src_ended == tgt_ended) return src_ended;
  const File& shorter = src_ended ? *src_ : *tgt_;
  const File& longer = src_ended ? *tgt_ : *src_;
  throw Error("the training corpus files differ in length: '" + shorter.path() + "' ends after line " +
              std::to_string(position_.line) + " but '" + longer.path() + "' has a line " +
              std::to_string(position_.line + 1) + "; the two sides must align line by line");
}

bool PairReader::next(std::string& src, std::string& tgt, std::string* links) {
  const bool src_ended = !src_->next(src, &position_.src_offset);
  const bool tgt_ended = !tgt_->next(tgt, &position_.tgt_offset);
  std::string ignored;
  std::string& link_line = links ? *links : ignored;
  link_line.clear();
  const bool links_ended = links_ ? !links_->next(link_line, &position_.links_offset) : src_ended;
  if (check_ends_together(src_ended, tgt_ended, links_ended)) return false;
  ++position_.line;
  return true;
}

bool PairReader::at_end() {
  const bool src_ended = src_->at_end();
  return check_ends_together(src_ended, tgt_->at_end(), links_ ? links_->at_end() : src_ended);
}

}  // namespace attn::data
