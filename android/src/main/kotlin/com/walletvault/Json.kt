package com.walletvault

import com.fasterxml.jackson.core.JsonFactory
import com.fasterxml.jackson.core.JsonGenerator
import com.fasterxml.jackson.core.JsonParser
import com.fasterxml.jackson.core.JsonProcessingException
import com.fasterxml.jackson.core.JsonToken
import java.io.ByteArrayOutputStream
import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction
import java.text.Normalizer

/** A parsed JSON value. Integers that fit 64 bits are [Integer]; every other number keeps its text in [Number]. */
sealed class JsonValue {
    object Null : JsonValue() { override fun toString() = "null" }
    data class Bool(val value: Boolean) : JsonValue()
    data class Integer(val value: Long) : JsonValue()
    /** A number with a fraction or exponent, or an integer beyond 64 bits: never allowed in what is authenticated. */
    data class Number(val text: String) : JsonValue()
    data class Str(val value: String) : JsonValue()
    data class Arr(val elements: List<JsonValue>) : JsonValue()
    /** An object; members keep their order, and equality ignores it (names are unique). */
    class Obj(val members: List<Pair<String, JsonValue>>) : JsonValue() {
        operator fun get(name: String): JsonValue? {
            for (member in members) if (member.first == name) return member.second
            return null
        }
        val names: List<String> get() = members.map { it.first }
        override fun equals(other: Any?): Boolean = other is Obj && members.size == other.members.size &&
            members.all { member -> other[member.first] == member.second }
        override fun hashCode(): Int = members.map { it.first.hashCode() xor it.second.hashCode() }.sum()
        override fun toString(): String = String(Json.write(this), Charsets.UTF_8)
    }

    val string: String? get() = (this as? Str)?.value
    val long: Long? get() = (this as? Integer)?.value
    val obj: Obj? get() = this as? Obj
    val typeName: String get() = when (this) {
        is Null -> "null"; is Bool -> "boolean"; is Integer, is Number -> "number"
        is Str -> "string"; is Arr -> "array"; is Obj -> "object"
    }
}

/** Thrown by [Json.parse]: the text is not one strict JSON value. */
class JsonParseError(message: String) : Exception(message)

/**
 * Strict JSON (RFC 8259) over jackson-core's streaming parser: UTF-8 only (checked by the JDK's decoder, which
 * refuses overlong forms and encoded surrogates), no byte order mark, duplicate member names refused (Jackson's
 * STRICT_DUPLICATE_DETECTION, plus names that are canonically equivalent, as Swift's String compares them),
 * unpaired surrogate escapes refused, at most [maxDepth] nested arrays and objects, and nothing but whitespace
 * after the value.
 */
internal object Json {
    const val DEFAULT_MAX_DEPTH = 64

    @Suppress("DEPRECATION")
    private val factory: JsonFactory = JsonFactory()
        .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
        .disable(JsonParser.Feature.ALLOW_COMMENTS)
        .disable(JsonParser.Feature.ALLOW_YAML_COMMENTS)
        .disable(JsonParser.Feature.ALLOW_SINGLE_QUOTES)
        .disable(JsonParser.Feature.ALLOW_UNQUOTED_FIELD_NAMES)
        .disable(JsonParser.Feature.ALLOW_NUMERIC_LEADING_ZEROS)
        .disable(JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS)
        .disable(JsonParser.Feature.ALLOW_UNQUOTED_CONTROL_CHARS)
        .disable(JsonParser.Feature.ALLOW_BACKSLASH_ESCAPING_ANY_CHARACTER)
        .disable(JsonParser.Feature.ALLOW_MISSING_VALUES)
        .disable(JsonParser.Feature.ALLOW_TRAILING_COMMA)
        .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET)

    /** Decodes strict UTF-8, or throws. */
    fun utf8(bytes: ByteArray): String = try {
        Charsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString()
    } catch (e: CharacterCodingException) {
        throw JsonParseError("not UTF-8")
    }

    fun parse(bytes: ByteArray, maxDepth: Int = DEFAULT_MAX_DEPTH): JsonValue = parse(utf8(bytes), maxDepth)

    fun parse(text: String, maxDepth: Int = DEFAULT_MAX_DEPTH): JsonValue {
        if (text.startsWith("\uFEFF")) throw JsonParseError("a byte order mark is not JSON text")
        try {
            factory.createParser(text).use { parser ->
                val first = parser.nextToken() ?: throw JsonParseError("empty text")
                val value = read(parser, first, 1, maxDepth)
                val trailing = parser.nextToken()
                if (trailing != null) throw JsonParseError("more than one value at offset ${parser.tokenLocation.charOffset}")
                return value
            }
        } catch (e: JsonProcessingException) {
            // Jackson's message quotes the input; only its location is kept, since the input may be a secret.
            val where = e.location?.charOffset ?: -1
            val what = if ((e.originalMessage ?: "").startsWith("Duplicate field")) "duplicate member name" else "syntax error"
            throw JsonParseError("$what at offset $where")
        } catch (e: JsonParseError) {
            throw e
        } catch (e: java.io.IOException) {
            throw JsonParseError("unreadable: ${e.javaClass.simpleName}")
        }
    }

    private fun read(parser: JsonParser, token: JsonToken, depth: Int, maxDepth: Int): JsonValue = when (token) {
        JsonToken.START_OBJECT -> {
            if (depth > maxDepth) throw JsonParseError("nested deeper than $maxDepth")
            val members = ArrayList<Pair<String, JsonValue>>()
            var seen: HashSet<String>? = null
            while (true) {
                val next = parser.nextToken()
                if (next == JsonToken.END_OBJECT) break
                if (next != JsonToken.FIELD_NAME) throw JsonParseError("member name expected")
                val name = checked(parser.currentName)
                // Swift (the other reader of these blobs) compares names up to canonical equivalence.
                val canonical = Normalizer.normalize(name, Normalizer.Form.NFC)
                val names = seen ?: HashSet<String>().also { seen = it }
                if (!names.add(canonical)) throw JsonParseError("duplicate member name")
                val valueToken = parser.nextToken() ?: throw JsonParseError("value expected")
                members.add(Pair(name, read(parser, valueToken, depth + 1, maxDepth)))
            }
            JsonValue.Obj(members)
        }
        JsonToken.START_ARRAY -> {
            if (depth > maxDepth) throw JsonParseError("nested deeper than $maxDepth")
            val elements = ArrayList<JsonValue>()
            while (true) {
                val next = parser.nextToken() ?: throw JsonParseError("unterminated array")
                if (next == JsonToken.END_ARRAY) break
                elements.add(read(parser, next, depth + 1, maxDepth))
            }
            JsonValue.Arr(elements)
        }
        JsonToken.VALUE_STRING -> JsonValue.Str(checked(parser.text))
        JsonToken.VALUE_NUMBER_INT -> when (parser.numberType) {
            JsonParser.NumberType.INT, JsonParser.NumberType.LONG -> JsonValue.Integer(parser.longValue)
            // Jackson calls some 19-digit integers big; what fits 64 bits is an integer, as in the Swift reader.
            else -> parser.text.toLongOrNull()?.let { JsonValue.Integer(it) } ?: finite(parser.text)
        }
        JsonToken.VALUE_NUMBER_FLOAT -> finite(parser.text)
        JsonToken.VALUE_TRUE -> JsonValue.Bool(true)
        JsonToken.VALUE_FALSE -> JsonValue.Bool(false)
        JsonToken.VALUE_NULL -> JsonValue.Null
        else -> throw JsonParseError("unexpected token")
    }

    /** A number a double can hold (FORMAT.md §3.1: `1e400` is not JSON a reader accepts, `invalidJSON`). */
    private fun finite(text: String): JsonValue.Number {
        val value = text.toDoubleOrNull()
        if (value == null || value.isInfinite() || value.isNaN()) throw JsonParseError("a number too large for a double")
        return JsonValue.Number(text)
    }

    /** Refuses strings holding an unpaired surrogate (only a `\uD800`-style escape can produce one). */
    private fun checked(text: String): String {
        var i = 0
        while (i < text.length) {
            val c = text[i]
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= text.length || !Character.isLowSurrogate(text[i + 1])) throw JsonParseError("unpaired surrogate")
                i += 2
                continue
            }
            if (Character.isLowSurrogate(c)) throw JsonParseError("unpaired surrogate")
            i++
        }
        return text
    }

    internal fun generator(out: java.io.OutputStream): JsonGenerator = factory.createGenerator(out)

    /** Compact JSON text of [value] through Jackson's generator (UTF-8, member order kept). */
    fun write(value: JsonValue): ByteArray {
        val out = ByteArrayOutputStream()
        factory.createGenerator(out).use { generator -> write(generator, value) }
        return out.toByteArray()
    }

    fun write(generator: JsonGenerator, value: JsonValue) {
        when (value) {
            is JsonValue.Null -> generator.writeNull()
            is JsonValue.Bool -> generator.writeBoolean(value.value)
            is JsonValue.Integer -> generator.writeNumber(value.value)
            is JsonValue.Number -> generator.writeNumber(value.text)
            is JsonValue.Str -> generator.writeString(value.value)
            is JsonValue.Arr -> {
                generator.writeStartArray()
                for (element in value.elements) write(generator, element)
                generator.writeEndArray()
            }
            is JsonValue.Obj -> {
                generator.writeStartObject()
                for ((name, member) in value.members) {
                    generator.writeFieldName(name)
                    write(generator, member)
                }
                generator.writeEndObject()
            }
        }
    }

    fun obj(vararg members: Pair<String, JsonValue>): JsonValue.Obj = JsonValue.Obj(members.toList())
    fun str(text: String): JsonValue.Str = JsonValue.Str(text)
    fun int(number: Long): JsonValue.Integer = JsonValue.Integer(number)
}
