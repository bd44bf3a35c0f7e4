/*
 * crawl_html.c — the links of a page, from libxml2's HTML parser, which
 * recovers from broken markup as browsers do.  It never touches the network
 * and keeps its complaints to itself: a page of junk simply has no links.
 */
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include "crawl_app.h"

static void walk(xmlNode *node, crawl_link_fn fn, void *arg)
{
    for (; node != NULL; node = node->next) {
        if (node->type == XML_ELEMENT_NODE && xmlStrcasecmp(node->name, BAD_CAST "a") == 0) {
            xmlChar *href = xmlGetProp(node, BAD_CAST "href");
            if (href) fn((const char *)href, arg);
            xmlFree(href);
        }
        walk(node->children, fn, arg);
    }
}

void crawl_html_links(const char *body, size_t len, crawl_link_fn fn, void *arg)
{
    if (len == 0 || len > (size_t)INT_MAX) return;
    int flags = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET |
                HTML_PARSE_NOBLANKS;
    htmlDocPtr doc = htmlReadMemory(body, (int)len, NULL, NULL, flags);
    if (doc == NULL) return;
    walk(xmlDocGetRootElement(doc), fn, arg);
    xmlFreeDoc(doc);
}
