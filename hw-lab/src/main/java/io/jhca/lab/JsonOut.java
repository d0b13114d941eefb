package io.jhca.lab;

import java.util.Locale;

/**
 * A small streaming JSON writer (objects, arrays, strings, numbers, booleans), indented two spaces. The tool
 * needs nothing more, and a hand-written writer keeps hw-lab's runtime dependencies to picocli and HdrHistogram.
 * Non-finite doubles are written as null, since JSON has no NaN.
 */
public final class JsonOut {
    private final StringBuilder sb = new StringBuilder();
    private int depth;
    private boolean first = true;
    private boolean afterKey;

    public JsonOut beginObject() {
        value();
        sb.append('{');
        depth++;
        first = true;
        return this;
    }

    public JsonOut endObject() {
        return close('}');
    }

    public JsonOut beginArray() {
        value();
        sb.append('[');
        depth++;
        first = true;
        return this;
    }

    public JsonOut endArray() {
        return close(']');
    }

    public JsonOut key(String k) {
        if (!first) {
            sb.append(',');
        }
        newline();
        string(k);
        sb.append(": ");
        first = false;
        afterKey = true;
        return this;
    }

    public JsonOut value(String s) {
        value();
        if (s == null) {
            sb.append("null");
        } else {
            string(s);
        }
        return this;
    }

    public JsonOut value(long v) {
        value();
        sb.append(v);
        return this;
    }

    public JsonOut value(double v) {
        value();
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            sb.append("null");
        } else if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            sb.append((long) v).append(".0");
        } else {
            sb.append(String.format(Locale.ROOT, "%.6f", v).replaceAll("0+$", "").replaceAll("\\.$", ".0"));
        }
        return this;
    }

    public JsonOut value(boolean v) {
        value();
        sb.append(v);
        return this;
    }

    public JsonOut field(String k, String v) {
        return key(k).value(v);
    }

    public JsonOut field(String k, long v) {
        return key(k).value(v);
    }

    public JsonOut field(String k, double v) {
        return key(k).value(v);
    }

    public JsonOut field(String k, boolean v) {
        return key(k).value(v);
    }

    @Override
    public String toString() {
        return sb.toString() + "\n";
    }

    private void value() {
        if (afterKey) {
            afterKey = false;
            return;
        }
        if (depth > 0) {
            if (!first) {
                sb.append(',');
            }
            newline();
            first = false;
        }
    }

    private JsonOut close(char c) {
        depth--;
        if (!first) {
            newline();
        }
        sb.append(c);
        first = false;
        return this;
    }

    private void newline() {
        sb.append('\n');
        for (int i = 0; i < depth; i++) {
            sb.append("  ");
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}
