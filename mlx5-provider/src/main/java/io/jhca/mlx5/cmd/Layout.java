package io.jhca.mlx5.cmd;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A PRM structure described field by field, in the spirit of Snabb's connectx.lua command builder, but with
 * positions written exactly as {@code struct mlx5_ifc_<name>_bits} in the kernel's mlx5_ifc.h gives them: bit offset
 * from the start of the structure and width in bits. Golden tests compile the same fields with {@code DEVX_SET}
 * against the real header and compare bytes, so every offset here is checked from outside.
 *
 * <pre>{@code
 * static final Layout CQC = Layout.struct("cqc", 0x40)
 *         .field("log_cq_size", 0x63, 5)
 *         .field("uar_page", 0x68, 24)
 *         .field("dbr_addr", 0x1c0, 64)
 *         .build();
 * CQC.set(buffer, 0, "log_cq_size", 10);
 * }</pre>
 *
 * A layout is immutable. Name lookups go through a hash map (fine on the control path); keep resolved
 * {@link Field}s for anything hot.
 */
public final class Layout {

    private final String name;
    private final int sizeBytes;
    private final List<Field> fields;
    private final Map<String, Field> byName;
    private final Field flexible;

    private Layout(String name, int sizeBytes, List<Field> fields) {
        this.name = name;
        this.sizeBytes = sizeBytes;
        this.fields = Collections.unmodifiableList(fields);
        Map<String, Field> map = new HashMap<>();
        Field flex = null;
        for (Field f : fields) {
            map.put(f.name(), f);
            if (f.kind() == Field.Kind.ARRAY && f.count() == Field.FLEXIBLE) {
                flex = f;
            }
        }
        this.byName = map;
        this.flexible = flex;
    }

    /** Starts a layout named like the mlx5_ifc structure ({@code "create_cq_in"}: {@code mlx5_ifc_create_cq_in_bits}). */
    public static Builder struct(String ifcName, int sizeBytes) {
        return new Builder(ifcName, sizeBytes);
    }

    /** The mlx5_ifc structure name, without the {@code mlx5_ifc_} prefix and {@code _bits} suffix. */
    public String name() {
        return name;
    }

    /** {@code DEVX_ST_SZ_BYTES}: the fixed part, without any trailing flexible array. */
    public int sizeBytes() {
        return sizeBytes;
    }

    /** Size with {@code elements} entries in the trailing flexible array (e.g. CREATE_CQ with its PAS list). */
    public int sizeBytes(int elements) {
        if (flexible == null) {
            throw new IllegalStateException(name + " has no flexible array");
        }
        if (elements < 0) {
            throw new IllegalArgumentException("negative element count " + elements);
        }
        return Math.addExact(flexible.byteOffset(), Math.multiplyExact(elements, flexible.elementBytes()));
    }

    /** The trailing flexible array ({@code pas}, {@code klm_pas_mtt}), or null. */
    public Field flexibleArray() {
        return flexible;
    }

    /** Fields in declaration order (header order), embedded structures flattened with dotted names. */
    public List<Field> fields() {
        return fields;
    }

    public boolean hasField(String fieldName) {
        return byName.containsKey(fieldName);
    }

    /** Resolves a field by name; throws with the layout name when absent. */
    public Field field(String fieldName) {
        Field f = byName.get(fieldName);
        if (f == null) {
            throw new IllegalArgumentException(name + " has no field '" + fieldName + "'");
        }
        return f;
    }

    /** Writes a scalar field of the structure that starts at {@code base}. */
    public Layout set(MutableDirectBuffer buffer, int base, String fieldName, long value) {
        field(fieldName).set(buffer, base, value);
        return this;
    }

    /** Reads a scalar field (unsigned). */
    public long get(DirectBuffer buffer, int base, String fieldName) {
        return field(fieldName).get(buffer, base);
    }

    /** Zeroes the fixed part of the structure. */
    public void clear(MutableDirectBuffer buffer, int base) {
        buffer.setMemory(base, sizeBytes, (byte) 0);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(name).append(" (").append(sizeBytes).append(" B)");
        for (Field f : fields) {
            sb.append("\n  ").append(f);
        }
        return sb.toString();
    }

    /** Collects fields; {@link #build()} checks that they fit and do not overlap. */
    public static final class Builder {
        private final String name;
        private final int sizeBytes;
        private final List<Field> fields = new ArrayList<>();

        private Builder(String name, int sizeBytes) {
            if (sizeBytes <= 0 || (sizeBytes & 3) != 0) {
                throw new IllegalArgumentException(name + ": size must be a positive multiple of 4, got " + sizeBytes);
            }
            this.name = name;
            this.sizeBytes = sizeBytes;
        }

        /** A scalar of 1..64 bits at {@code bitOffset}. */
        public Builder field(String fieldName, int bitOffset, int bitWidth) {
            if (bitWidth < 1 || bitWidth > 64) {
                throw new IllegalArgumentException(name + "." + fieldName + ": width " + bitWidth + " not in 1..64");
            }
            return add(new Field(fieldName, bitOffset, bitWidth, Field.Kind.SCALAR, 1, false));
        }

        /** A byte-aligned blob of {@code length} bytes (e.g. {@code rgid_rip[16][0x8]}). */
        public Builder bytes(String fieldName, int bitOffset, int length) {
            if ((bitOffset & 7) != 0 || length <= 0) {
                throw new IllegalArgumentException(name + "." + fieldName
                        + ": byte blobs must be byte aligned and non-empty");
            }
            return add(new Field(fieldName, bitOffset, length * 8, Field.Kind.BYTES, 1, false));
        }

        /** A fixed array of {@code count} elements of 8, 16, 32 or 64 bits. */
        public Builder array(String fieldName, int bitOffset, int elementBits, int count) {
            if (count <= 0) {
                throw new IllegalArgumentException(name + "." + fieldName + ": count must be positive");
            }
            return addArray(fieldName, bitOffset, elementBits, count);
        }

        /** A trailing array with no fixed length ({@code u8 pas[][0x40]}); at most one per layout. */
        public Builder flexibleArray(String fieldName, int bitOffset, int elementBits) {
            return addArray(fieldName, bitOffset, elementBits, Field.FLEXIBLE);
        }

        private Builder addArray(String fieldName, int bitOffset, int elementBits, int count) {
            if (elementBits != 8 && elementBits != 16 && elementBits != 32 && elementBits != 64) {
                throw new IllegalArgumentException(name + "." + fieldName + ": element width " + elementBits);
            }
            if (bitOffset % elementBits != 0 && (bitOffset & 31) != 0) {
                throw new IllegalArgumentException(name + "." + fieldName + ": array not aligned to its elements");
            }
            return add(new Field(fieldName, bitOffset, elementBits, Field.Kind.ARRAY, count, false));
        }

        /**
         * A convenience scalar overlapping real fields, e.g. the 48-bit {@code rmac} made of {@code rmac_47_32} and
         * {@code rmac_31_0}. Not checked for overlap, not present in the C header.
         */
        public Builder alias(String fieldName, int bitOffset, int bitWidth) {
            if (bitWidth < 1 || bitWidth > 64) {
                throw new IllegalArgumentException(name + "." + fieldName + ": width " + bitWidth + " not in 1..64");
            }
            return add(new Field(fieldName, bitOffset, bitWidth, Field.Kind.SCALAR, 1, true));
        }

        /** Embeds another layout at {@code bitOffset}; its fields appear as {@code fieldName.<inner>}. */
        public Builder embed(String fieldName, int bitOffset, Layout nested) {
            if ((bitOffset & 31) != 0) {
                throw new IllegalArgumentException(name + "." + fieldName + ": embedded structures start on a dword");
            }
            if (nested.flexible != null) {
                throw new IllegalArgumentException(name + "." + fieldName
                        + ": cannot embed a layout with a flexible array");
            }
            if (bitOffset + nested.sizeBytes * 8 > sizeBytes * 8) {
                throw new IllegalArgumentException(name + "." + fieldName + ": " + nested.name + " does not fit");
            }
            for (Field f : nested.fields) {
                add(f.moved(fieldName, bitOffset));
            }
            return this;
        }

        /** The common command input header: {@code opcode}, optionally {@code uid}, {@code op_mod} ("mbox_in"). */
        public Builder inHeader(boolean withUid) {
            field("opcode", 0x00, 16);
            if (withUid) {
                field("uid", 0x10, 16);
            }
            return field("op_mod", 0x30, 16);
        }

        /** The common command output header: {@code status}, {@code syndrome} (cmd.c "mbox_out"). */
        public Builder outHeader() {
            return field("status", 0x00, 8).field("syndrome", 0x20, 32);
        }

        private Builder add(Field f) {
            if (f.bitOffset() < 0) {
                throw new IllegalArgumentException(name + "." + f.name() + ": negative offset");
            }
            for (Field g : fields) {
                if (g.name().equals(f.name())) {
                    throw new IllegalArgumentException(name + ": duplicate field " + f.name());
                }
            }
            fields.add(f);
            return this;
        }

        public Layout build() {
            int sizeBits = sizeBytes * 8;
            List<Field> real = new ArrayList<>();
            int flexCount = 0;
            for (Field f : fields) {
                boolean flex = f.kind() == Field.Kind.ARRAY && f.count() == Field.FLEXIBLE;
                if (flex) {
                    flexCount++;
                    if (f.bitOffset() > sizeBits) {
                        throw new IllegalArgumentException(name + "." + f.name() + " starts past the structure");
                    }
                } else if (f.bitOffset() + f.totalBits() > sizeBits) {
                    throw new IllegalArgumentException(name + "." + f.name() + " ends past the structure ("
                            + sizeBytes + " B)");
                }
                if (!f.isAlias() && !flex) {
                    real.add(f);
                }
            }
            if (flexCount > 1) {
                throw new IllegalArgumentException(name + ": more than one flexible array");
            }
            real.sort(Comparator.comparingInt(Field::bitOffset));
            for (int i = 1; i < real.size(); i++) {
                Field a = real.get(i - 1);
                Field b = real.get(i);
                if (a.bitOffset() + a.totalBits() > b.bitOffset()) {
                    throw new IllegalArgumentException(name + ": " + a.name() + " overlaps " + b.name());
                }
            }
            return new Layout(name, sizeBytes, new ArrayList<>(fields));
        }
    }
}
