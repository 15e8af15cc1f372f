// simdjson's On-Demand API walked depth first into wv_json_events. On-Demand checks only what is asked of it, so
// every value is asked for in full (each string unescaped, each number parsed, each literal matched) and the
// text must end after its one value: the walk validates the whole text, as a tree-building parser would.
//
// On-Demand is compiled into its caller for one kernel, chosen by the compiler flags; without -mavx2 that is the
// portable kernel, several times slower than yajl's gain would justify. On x86-64 this file therefore asks for the
// AVX2 ("haswell") kernel and compiles everything that touches it for AVX2, and the entry point, compiled for any
// x86-64, runs it only after asking the CPU; elsewhere it reports the parser unavailable and the caller uses yajl.
#include "json_scan.h"

#include <string.h>

#if defined(__x86_64__) && defined(__clang__)
#define WV_JSON_SCAN_AVAILABLE 1
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
// Everything from here to the pop is AVX2 code, the standard library's templates included: simdjson's always-inline
// functions can only be inlined into AVX2 functions, and std::pair's constructor is one of their callers.
#pragma clang attribute push(__attribute__((target("avx2,bmi,pclmul,lzcnt"))), apply_to = function)
#include <simdjson.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <vector>

namespace {

namespace ondemand = simdjson::haswell::ondemand;

/// The text of a number token: raw_json_token() runs on to the next token, so JSON whitespace is cut off.
std::string_view without_trailing_space(std::string_view token) {
    size_t length = token.size();
    while (length > 0) {
        char last = token[length - 1];
        if (last != ' ' && last != '\t' && last != '\n' && last != '\r') break;
        length--;
    }
    return token.substr(0, length);
}

/// A parser and the padded copy of the input it reads: simdjson reads up to SIMDJSON_PADDING bytes past the end.
/// Both are reused, since allocating them per call costs a vault-sized open more than the parse itself.
/// The constructor and destructor are spelled out so that they, too, are compiled for AVX2: an implicit one is
/// not, and could not inline the parser's.
struct Scanner {
    Scanner() {}
    ~Scanner() {}
    ondemand::parser parser;
    std::vector<char> padded;
};

/// Idle scanners, so that concurrent calls each get one and a thread pool does not keep one per thread.
class ScannerPool {
public:
    std::unique_ptr<Scanner> take() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (idle_.empty()) return std::make_unique<Scanner>();
        auto scanner = std::move(idle_.back());
        idle_.pop_back();
        return scanner;
    }

    void give_back(std::unique_ptr<Scanner> scanner) {
        // A scanner holds several times the largest text it has read; one that read an unusually large text is
        // dropped rather than kept.
        if (scanner->padded.capacity() > max_kept_bytes) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (idle_.size() < max_idle) idle_.push_back(std::move(scanner));
    }

private:
    // Saves parse on up to 64 storage threads, but only two cores run them: a few idle scanners cover it.
    static constexpr size_t max_idle = 4;
    static constexpr size_t max_kept_bytes = 8u << 20;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Scanner>> idle_;
};

/// The text between a string token's quotes: raw_json_token() runs from the opening quote to the next token.
std::string_view between_quotes(std::string_view token) {
    std::string_view closed = without_trailing_space(token);
    return closed.substr(1, closed.size() - 2);
}

class Walker {
public:
    Walker(const char *raw_member, const wv_json_events *events, void *context)
        : raw_member_(raw_member), events_(events), context_(context) {}

    bool stopped() const { return stopped_; }

    /// Walks one value; works for the document itself and for values inside it, which On-Demand types apart.
    template <typename Value> simdjson::error_code walk(Value &value) {
        ondemand::json_type type;
        if (auto error = value.type().get(type)) return error;
        switch (type) {
        case ondemand::json_type::object: return walk_object(value);
        case ondemand::json_type::array: return walk_array(value);
        case ondemand::json_type::string: {
            std::string_view text;
            if (auto error = value.get_string().get(text)) return error;
            return report(events_->string(context_, reinterpret_cast<const unsigned char *>(text.data()), text.size()));
        }
        case ondemand::json_type::number: {
            // The literal is taken before get_number() consumes the value; get_number() then checks its grammar.
            std::string_view literal;
            if (auto error = token_of(value).get(literal)) return error;
            if (auto error = value.get_number().error()) return error;
            literal = without_trailing_space(literal);
            return report(events_->number(context_, literal.data(), literal.size()));
        }
        case ondemand::json_type::boolean: {
            bool flag;
            if (auto error = value.get_bool().get(flag)) return error;
            return report(events_->boolean(context_, flag ? 1 : 0));
        }
        case ondemand::json_type::null: {
            // simdjson 3.0.1 checks the wrong byte after a null at the root (json[5] for json[4]), so `nullx` and
            // `null"` passed there; the token itself must be the four letters.
            std::string_view literal;
            if (auto error = token_of(value).get(literal)) return error;
            if (without_trailing_space(literal) != "null") return simdjson::N_ATOM_ERROR;
            bool is_null;
            if (auto error = value.is_null().get(is_null)) return error;
            if (!is_null) return simdjson::N_ATOM_ERROR;
            return report(events_->null_value(context_));
        }
        }
        return simdjson::TAPE_ERROR;
    }

private:
    template <typename Value> simdjson::error_code walk_object(Value &value) {
        bool top_level = depth_ == 0;
        ++depth_;
        simdjson::error_code result = walk_members(value, top_level);
        --depth_;
        return result;
    }

    template <typename Value> simdjson::error_code walk_array(Value &value) {
        ++depth_;
        simdjson::error_code result = walk_elements(value);
        --depth_;
        return result;
    }

    template <typename Value> simdjson::error_code walk_members(Value &value, bool top_level) {
        ondemand::object object;
        if (auto error = value.get_object().get(object)) return error;
        if (!events_->start_object(context_)) return stop();
        for (auto member : object) {
            // Used in place: a default-constructed field is a std::pair, whose constructor is not AVX2 code.
            if (auto error = member.error()) return error;
            ondemand::field &field = member.value_unsafe();
            std::string_view name;
            if (auto error = field.unescaped_key().get(name)) return error;
            if (!events_->member_name(context_, reinterpret_cast<const unsigned char *>(name.data()), name.size())) {
                return stop();
            }
            if (top_level && raw_member_ != nullptr && name == raw_member_) {
                ondemand::json_type type;
                if (auto error = field.value().type().get(type)) return error;
                if (type == ondemand::json_type::string) {
                    // The iterate() pass has checked the token's UTF-8 and control characters; only escapes remain.
                    std::string_view text = between_quotes(field.value().raw_json_token());
                    int answer = events_->raw_string(context_, reinterpret_cast<const unsigned char *>(text.data()),
                                                     text.size());
                    if (answer == 0) return stop();
                    if (answer != WV_JSON_WANT_UNESCAPED) {
                        // raw_json_token() only looks: the value must still be consumed, or the loop would skip it,
                        // and On-Demand's skipping checks nothing (`"cipher":"a":"b"` went through). Taking it as a raw
                        // string consumes it without unescaping.
                        if (auto error = field.value().get_raw_json_string().error()) return error;
                        continue;
                    }
                }
            }
            if (auto error = walk(field.value())) return error;
        }
        return report(events_->end_object(context_));
    }

    template <typename Value> simdjson::error_code walk_elements(Value &value) {
        ondemand::array array;
        if (auto error = value.get_array().get(array)) return error;
        if (!events_->start_array(context_)) return stop();
        for (auto element : array) {
            ondemand::value item;
            if (auto error = std::move(element).get(item)) return error;
            if (auto error = walk(item)) return error;
        }
        return report(events_->end_array(context_));
    }

    static simdjson::simdjson_result<std::string_view> token_of(ondemand::value &value) { return value.raw_json_token(); }
    static simdjson::simdjson_result<std::string_view> token_of(ondemand::document &document) {
        return document.raw_json_token();
    }

    simdjson::error_code report(int accepted) { return accepted ? simdjson::SUCCESS : stop(); }

    simdjson::error_code stop() {
        stopped_ = true;
        // Any error code ends the walk; `stopped_` tells the caller it was an event's choice.
        return simdjson::UNINITIALIZED;
    }

    const char *raw_member_;
    const wv_json_events *events_;
    void *context_;
    /// Arrays and objects entered and not yet left.
    int depth_ = 0;
    bool stopped_ = false;
};

wv_json_scan_status scan(const char *input, size_t length, const char *raw_member, const wv_json_events *events,
                         void *context) {
    // Built on first use, after the CPU check: no AVX2 code may run at load time.
    static ScannerPool pool;
    auto scanner = pool.take();
    scanner->padded.resize(length + simdjson::SIMDJSON_PADDING);
    if (length > 0) std::memcpy(scanner->padded.data(), input, length);
    std::memset(scanner->padded.data() + length, 0, simdjson::SIMDJSON_PADDING);

    Walker walker(raw_member, events, context);
    wv_json_scan_status status = WV_JSON_SCAN_OK;
    ondemand::document document;
    if (scanner->parser.iterate(scanner->padded.data(), length, scanner->padded.size()).get(document)) {
        status = WV_JSON_SCAN_REFUSED;
    } else if (walker.walk(document)) {
        status = walker.stopped() ? WV_JSON_SCAN_STOPPED : WV_JSON_SCAN_REFUSED;
    } else if (document.current_location().error() != simdjson::OUT_OF_BOUNDS) {
        // On-Demand stops after the root value; anything but the end of the text after it is trailing content.
        status = WV_JSON_SCAN_REFUSED;
    }
    pool.give_back(std::move(scanner));
    return status;
}

}  // namespace

#pragma clang attribute pop
#endif

extern "C" wv_json_scan_status wv_json_scan(const char *input, size_t length, const char *raw_member,
                                            const wv_json_events *events, void *context) {
#if WV_JSON_SCAN_AVAILABLE
    static const bool cpu_has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                                     __builtin_cpu_supports("pclmul");
    if (!cpu_has_avx2) return WV_JSON_SCAN_UNAVAILABLE;
    try {
        return scan(input, length, raw_member, events, context);
    } catch (const std::bad_alloc &) {
        return WV_JSON_SCAN_NO_MEMORY;
    }
#else
    (void)input; (void)length; (void)raw_member; (void)events; (void)context;
    return WV_JSON_SCAN_UNAVAILABLE;
#endif
}

extern "C" long wv_json_find(const char *text, size_t length, const char *needle, size_t needle_length) {
    const void *found = memmem(text, length, needle, needle_length);
    return found ? static_cast<const char *>(found) - text : -1;
}
