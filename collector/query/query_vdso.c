/* [vdso] frames named from the image the session's agent sent (store_vdso.h):
 * the image goes to the resolver, which finds it by the mapping's build-id. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "query_priv.h"
#include "store/store_vdso.h"
#include "symbols.h"

int qm_vdso_of(struct store *s, struct build *b, struct sess *se)
{
	bool want = false;
	for (size_t i = 0; i < se->nmaps && !want; i++)
		want = se->maps[i].bidlen && se->maps[i].path && strcmp(se->maps[i].path, "[vdso]") == 0;
	if (!want || !b->sr)
		return 0;
	uint8_t *img;
	size_t len;
	int rc = store_vdso_image(s, se->id, &img, &len);
	if (rc <= 0)
		return rc;
	rc = sym_resolver_add_image(b->sr, img, len);
	free(img);
	return rc == -ENOMEM ? rc : 0; /* an image without build-id, or too many: [vdso] stays a module */
}
