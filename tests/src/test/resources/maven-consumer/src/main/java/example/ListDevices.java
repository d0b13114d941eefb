package example;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Verbs;

/** Lists jhca's devices, opens rxe0 and prints its GID table: jhca used from outside its own build. */
public final class ListDevices {
    public static void main(String[] args) {
        for (DeviceInfo d : Verbs.devices()) {
            System.out.println("device " + d.name() + " (" + d.provider() + ")");
        }
        try (Context ctx = Verbs.open("rxe0")) {
            for (int i = 0; i < 2; i++) {
                Gid g = ctx.queryGid(1, i);
                System.out.println("rxe0 GID[" + i + "] " + g + " " + ctx.queryGidType(1, i));
            }
        }
    }
}
