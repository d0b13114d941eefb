package io.jhca.rxe;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.Context;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.VerbsException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Registration under keys a device model chose (its mkeys), next to ordinary registrations. */
class RxeKeysTest {

    @Test
    void chosenKeysAreUsedExactlyAndCollisionsRefused() {
        try (Context ctx = RxeProvider.open(RxeDeviceConfig.builder("rxekeys0").address("127.0.0.41").build());
             ProtectionDomain pd = ctx.allocatePd();
             DmaRegion mem = DmaMemory.allocate(8192)) {
            int access = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            MemoryRegion a = RxeKeys.register(pd, mem, 0, 4096, access, 0x000005a7);
            assertEquals(0x000005a7, a.lkey());
            assertEquals(0x000005a7, a.rkey());
            MemoryRegion local = RxeKeys.register(pd, mem, 4096, 4096, Access.mask(Access.LOCAL_WRITE), 0x00000301);
            assertEquals(0x00000301, local.lkey());
            assertEquals(0, local.rkey(), "no remote access: no rkey, as rxe does");
            assertThrows(IllegalStateException.class, () -> RxeKeys.register(pd, mem, 0, 16, access, 0x000005ff));
            assertThrows(IllegalArgumentException.class, () -> RxeKeys.register(pd, mem, 0, 16, access, 0x000000ff));
            assertThrows(VerbsException.class, () -> RxeKeys.register(pd, mem, 4096, 8192, access, 0x00000700),
                    "the shared registration checks still apply");
            // ordinary keys use the indices the chosen ones skipped, never the chosen ones
            MemoryRegion b = pd.register(mem, 0, 64, access);
            assertNotEquals(5, b.lkey() >>> 8);
            assertNotEquals(3, b.lkey() >>> 8);
            b.close();
            local.close();
            a.close();
        }
    }
}
