/* The /profile range form and brush (http_profile_form.h). */
#include "http_profile_form.h"

#include "report/svg.h"

static void field(FILE *f, const char *name, const char *label, const char *value)
{
	fprintf(f, "<label>%s <input name=\"%s\" size=\"16\" value=\"", label, name);
	svg_escape(f, value);
	fputs("\"></label>\n", f);
}

/* Brush: a drag across a chart's plot maps x to time through the chart's
 * data-t0/-t1 (unix s) and data-plot-x/-w, and fills the chosen pair of fields. */
static const char brush_script[] =
	"<script>(function(){var form=document.getElementById('range');"
	"[].forEach.call(document.querySelectorAll('svg.cpu-chart'),function(svg){"
	"var t0=+svg.getAttribute('data-t0'),t1=+svg.getAttribute('data-t1'),"
	"L=+svg.getAttribute('data-plot-x'),W=+svg.getAttribute('data-plot-w'),x0=null,"
	"sel=document.createElementNS('http://www.w3.org/2000/svg','rect');"
	"sel.setAttribute('class','brush');sel.setAttribute('y','10');"
	"sel.setAttribute('height',svg.getAttribute('data-plot-h'));sel.setAttribute('width','0');"
	"sel.setAttribute('fill','rgba(30,100,255,0.25)');svg.appendChild(sel);"
	"function px(e){var x=e.clientX-svg.getBoundingClientRect().left;return Math.max(L,Math.min(L+W,x));}"
	"function t(x){return t0+(x-L)/W*(t1-t0);}"
	"svg.addEventListener('mousedown',function(e){x0=px(e);window.pfHold=true;sel.setAttribute('x',x0);"
	"sel.setAttribute('width','0');e.preventDefault();});"
	"svg.addEventListener('mousemove',function(e){if(x0===null)return;var x=px(e);"
	"sel.setAttribute('x',Math.min(x,x0));sel.setAttribute('width',Math.abs(x-x0));});"
	"window.addEventListener('mouseup',function(e){if(x0===null)return;var x=px(e),a=Math.min(x,x0),"
	"b=Math.max(x,x0);x0=null;if(b-a<2)return;var w=document.getElementById('brush-target').value,"
	"p=w==='view'?'':w+'_';form.elements[p+'since'].value=t(a).toFixed(3);"
	"form.elements[p+'until'].value=t(b).toFixed(3);});});})();</script>\n";

void profile_form_html(FILE *f, const struct profile_args *a)
{
	fputs("<form id=\"range\" method=\"get\" action=\"/profile\"><fieldset><legend>Range shown</legend>\n", f);
	field(f, "since", "from", a->since);
	field(f, "until", "to", a->until);
	field(f, "agent", "agents", a->agent);
	fprintf(f, "<label><input type=\"checkbox\" name=\"offcpu\" value=\"1\"%s> off-CPU too</label>\n",
		a->offcpu ? " checked" : "");
	fprintf(f, "<label><input type=\"checkbox\" name=\"sens\" value=\"1\"%s> latency sensitivity per function"
		   "</label>\n",
		a->sens ? " checked" : "");
	fputs("</fieldset><fieldset><legend>Compare two ranges</legend>\n", f);
	field(f, "a_since", "A from", a->a_since);
	field(f, "a_until", "A to", a->a_until);
	field(f, "b_since", "B from", a->b_since);
	field(f, "b_until", "B to", a->b_until);
	fputs("</fieldset><p>Drag across a chart to set <select id=\"brush-target\"><option value=\"view\">the range "
	      "shown</option><option value=\"a\">range A</option><option value=\"b\">range B</option></select> "
	      "(times: unix seconds, ISO-8601, 10m back, now). <button type=\"submit\" id=\"range-go\">show</button>"
	      "</p></form>\n",
	      f);
}

void profile_brush_script(FILE *f)
{
	fputs(brush_script, f);
}
