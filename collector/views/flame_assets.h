/* The flame graph page's inline script and style (flame_assets.c). */
#ifndef COLLECTOR_VIEWS_FLAME_ASSETS_H
#define COLLECTOR_VIEWS_FLAME_ASSETS_H

extern const char flame_js[];
extern const char flame_css[];

#endif
