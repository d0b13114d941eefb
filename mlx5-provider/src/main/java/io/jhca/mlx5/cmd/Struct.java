package io.jhca.mlx5.cmd;

import org.agrona.MutableDirectBuffer;

/**
 * A reusable flyweight binding a {@link Layout} to a buffer position, so command building reads like the PRM:
 *
 * <pre>{@code
 * Struct in = new Struct().wrap(CqLayouts.CREATE_CQ_IN, buffer, 0, CqLayouts.CREATE_CQ_IN.sizeBytes(npas)).clear()
 *         .set("opcode", CmdOpcode.CREATE_CQ)
 *         .set("cq_context.log_cq_size", 10)
 *         .set("cq_context.dbr_addr", dbrIova);
 * }</pre>
 */
public final class Struct {

    private Layout layout;
    private MutableDirectBuffer buffer;
    private int base;
    private int length;

    /** Binds to {@code layout} at {@code base}, covering its fixed size. */
    public Struct wrap(Layout layout, MutableDirectBuffer buffer, int base) {
        return wrap(layout, buffer, base, layout.sizeBytes());
    }

    /** Binds to {@code layout} at {@code base}, covering {@code length} bytes (fixed part plus trailing array). */
    public Struct wrap(Layout layout, MutableDirectBuffer buffer, int base, int length) {
        if (base < 0 || length < 0 || (long) base + length > buffer.capacity()) {
            throw new IndexOutOfBoundsException(layout.name() + ": [" + base + ", " + base + "+" + length
                    + ") outside a buffer of " + buffer.capacity() + " bytes");
        }
        this.layout = layout;
        this.buffer = buffer;
        this.base = base;
        this.length = length;
        return this;
    }

    public Layout layout() {
        return layout;
    }

    public MutableDirectBuffer buffer() {
        return buffer;
    }

    public int base() {
        return base;
    }

    /** Bytes covered: what to pass as the command length. */
    public int length() {
        return length;
    }

    /** Zeroes every covered byte. */
    public Struct clear() {
        buffer.setMemory(base, length, (byte) 0);
        return this;
    }

    public Struct set(String field, long value) {
        layout.field(field).set(buffer, base, value);
        return this;
    }

    public Struct set(Field field, long value) {
        field.set(buffer, base, value);
        return this;
    }

    public Struct set(String field, boolean value) {
        layout.field(field).set(buffer, base, value);
        return this;
    }

    public Struct setBytes(String field, byte[] value) {
        layout.field(field).setBytes(buffer, base, value);
        return this;
    }

    public Struct setElement(String field, int index, long value) {
        Field f = layout.field(field);
        checkCovered(f.elementByteOffset(index) + f.elementBytes());
        f.setElement(buffer, base, index, value);
        return this;
    }

    public long get(String field) {
        return layout.field(field).get(buffer, base);
    }

    public long get(Field field) {
        return field.get(buffer, base);
    }

    public long getElement(String field, int index) {
        Field f = layout.field(field);
        checkCovered(f.elementByteOffset(index) + f.elementBytes());
        return f.getElement(buffer, base, index);
    }

    private void checkCovered(int end) {
        if (end > length) {
            throw new IndexOutOfBoundsException(layout.name() + ": byte " + end + " beyond the " + length
                    + " bytes this view covers");
        }
    }
}
