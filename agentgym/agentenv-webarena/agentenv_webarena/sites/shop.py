"""The shop: WebArena's One Stop Market in miniature. Search, categories, product pages with reviews, a cart, a
checkout form that places an order, the order history, and an account page whose shipping address can be changed.

Forms keep their fields empty (a placeholder says what an empty field means), because WebArena's ``type`` types at
the end of what a field already holds.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from agentenv_webarena.sites.pages import escape, links, page, redirect
from agentenv_webarena.sites.state import Instances, ShopState, instance_routes
from agentenv_webarena.world import CUSTOMER, CUSTOMER_EMAIL, Order, Product, World, slug

NAME = "Loopback Market"
PER_PAGE = 10
ORDER_DATE = "5/20/24"  # the date of an order placed during a task (fixed: a task's answer must not depend on the day)


def search(world: World, query: str) -> list[Product]:
    """Products whose name shares words with the query, most shared words first, the whole query as a phrase before
    that (so a product's full name finds it first), then by name."""
    words = set(query.lower().split())
    scored = []
    for p in world.products.values():
        name = p.name.lower()
        shared = len(words & set(name.split()))
        if shared:
            scored.append((-(shared + (query.lower().strip() in name) * 10), p.name, p))
    return [p for *_, p in sorted(scored, key=lambda t: (t[0], t[1]))]


def order_lines(order: Order, world: World) -> str:
    return "".join(f"<li>{escape(world.products[pid].name)} (quantity {q}) "
                   f"<span>{world.products[pid].price_text} each</span></li>" for pid, q in order.items)


def shop_app(world: World, instances: Instances) -> Starlette:
    slugs = {slug(c): c for c in world.categories}

    def nav(state: ShopState) -> str:
        count = sum(state.cart.values())
        account = [("/", "Home"), ("/account", "My Account"), ("/orders", "My Orders"), ("/cart", "My Cart")]
        return (f'<nav aria-label="Account">{links(account)}'
                f" <span>{count} item{'s' * (count != 1)} in cart</span></nav>"
                f'<nav aria-label="Categories">{links((f"/category/{s}", c) for s, c in slugs.items())}</nav>'
                '<form action="/search" role="search"><input type="text" name="q" aria-label="Search" '
                'placeholder="Search entire store here..."> <button type="submit">Search</button></form>')

    def listing(state: ShopState, title: str, found: list[Product], request: Request) -> Response:
        raw = request.query_params.get("page", "1")
        n = int(raw) if raw.isdigit() and int(raw) >= 1 else 1
        shown = found[(n - 1) * PER_PAGE:n * PER_PAGE]
        rows = "".join(f'<li><a href="/product/{p.id}">{escape(p.name)}</a> <span>{p.price_text}</span></li>'
                       for p in shown)
        more = ""
        if n * PER_PAGE < len(found):
            params = dict(request.query_params, page=str(n + 1))
            more = '<p><a href="?' + "&amp;".join(f"{escape(k)}={escape(v)}" for k, v in params.items()) + \
                   '">Next page</a></p>'
        body = (f"<h1>{escape(title)}</h1><p>{len(found)} item{'s' * (len(found) != 1)}, page {n}</p>"
                f'<ol class="products">{rows}</ol>{more}' if found else
                f"<h1>{escape(title)}</h1><p>Your search returned no results.</p>")
        return page(f"{title} - {NAME}", nav(state), body)

    async def home(request: Request, state: ShopState) -> Response:
        featured = [world.products[i] for i in sorted(world.products)[::40]]
        rows = "".join(f'<li><a href="/product/{p.id}">{escape(p.name)}</a> <span>{p.price_text}</span></li>'
                       for p in featured)
        return page(NAME, nav(state), f"<h1>{NAME}</h1><h2>Featured products</h2><ul>{rows}</ul>")

    async def search_page(request: Request, state: ShopState) -> Response:
        query = request.query_params.get("q", "")
        return listing(state, f"Search results for: '{query}'", search(world, query), request)

    async def category(request: Request, state: ShopState) -> Response:
        name = slugs.get(request.path_params["slug"])
        if name is None:
            return page(f"404 - {NAME}", nav(state), "<h1>Whoops, our bad...</h1><p>No such category.</p>", 404)
        found = sorted((p for p in world.products.values() if p.category == name), key=lambda p: p.name)
        return listing(state, name, found, request)

    async def product(request: Request, state: ShopState) -> Response:
        p = world.products.get(request.path_params["pid"])
        if p is None:
            return page(f"404 - {NAME}", nav(state), "<h1>Whoops, our bad...</h1><p>No such product.</p>", 404)
        count = len(p.reviews)
        reviews = "".join(f'<li class="review"><p>{"★" * stars} by {escape(author)}</p><p>{escape(text)}</p></li>'
                          for author, stars, text in p.reviews)
        body = (f'<h1 class="product-name">{escape(p.name)}</h1><p class="price">{p.price_text}</p>'
                f'<p>In stock · SKU: <span class="sku">{p.sku}</span> · Category: '
                f'<a href="/category/{slug(p.category)}">{escape(p.category)}</a></p>'
                + (f'<p>Rating: {p.rating}% · <a href="#reviews">{count} Review{"s" * (count != 1)}</a></p>'
                   if count else "<p>No reviews yet</p>")
                + f'<form method="post" action="/cart/add"><input type="hidden" name="product" value="{p.id}">'
                  '<label>Qty <input type="text" name="qty" aria-label="Qty" placeholder="1" size="3"></label> '
                  '<button type="submit">Add to Cart</button></form>'
                  f'<p class="description">{escape(p.description)}</p>'
                  f'<section id="reviews"><h2>Customer Reviews ({count})</h2><ul>{reviews}</ul></section>')
        return page(f"{p.name} - {NAME}", nav(state), body)

    async def cart_add(request: Request, state: ShopState) -> Response:
        form = await request.form()
        pid, qty = str(form.get("product", "")), str(form.get("qty", "")).strip() or "1"
        if not pid.isdigit() or int(pid) not in world.products or not qty.isdigit() or int(qty) < 1:
            return page(f"Error - {NAME}", nav(state), "<h1>Error</h1><p>Please enter a valid quantity "
                        "(a whole number of at least 1).</p>", 400)
        state.cart[int(pid)] = state.cart.get(int(pid), 0) + int(qty)
        return redirect("/cart")

    async def cart_remove(request: Request, state: ShopState) -> Response:
        form = await request.form()
        state.cart.pop(int(form.get("product", "0") or 0), None)
        return redirect("/cart")

    async def cart(request: Request, state: ShopState) -> Response:
        if not state.cart:
            return page(f"Shopping Cart - {NAME}", nav(state),
                        "<h1>Shopping Cart</h1><p>You have no items in your shopping cart.</p>")
        rows = "".join(
            f"<li>{escape(world.products[pid].name)} (quantity {q}) <span>${world.products[pid].price * q:,.2f}</span>"
            f' <form method="post" action="/cart/remove" style="display:inline"><input type="hidden" name="product" '
            f'value="{pid}"><button type="submit">Remove {escape(world.products[pid].name)}</button></form></li>'
            for pid, q in state.cart.items())
        total = sum(world.products[pid].price * q for pid, q in state.cart.items())
        body = (f'<h1>Shopping Cart</h1><ul id="cart">{rows}</ul><p>Subtotal: ${total:,.2f}</p>'
                '<p><a href="/checkout">Proceed to Checkout</a></p>')
        return page(f"Shopping Cart - {NAME}", nav(state), body)

    def address_form(action: str, button: str, name: bool) -> str:
        fields = [("name", "Full name")] * name + [("street", "Street address"), ("city", "City"),
                                                   ("postcode", "Postcode")]
        inputs = "".join(f'<p><label>{label} <input type="text" name="{key}" aria-label="{label}"></label></p>'
                         for key, label in fields)
        return f'<form method="post" action="{action}">{inputs}<p><button type="submit">{button}</button></p></form>'

    async def checkout(request: Request, state: ShopState) -> Response:
        if request.method == "GET":
            if not state.cart:
                return redirect("/cart")
            items = "".join(f"<li>{escape(world.products[pid].name)} (quantity {q})</li>"
                            for pid, q in state.cart.items())
            return page(f"Checkout - {NAME}", nav(state), f"<h1>Checkout</h1><h2>Order summary</h2><ul>{items}</ul>"
                        "<h2>Shipping address</h2>" + address_form("/checkout", "Place Order", name=True))
        form = {k: str(v).strip() for k, v in (await request.form()).items()}
        missing = [label for key, label in (("name", "Full name"), ("street", "Street address"), ("city", "City"),
                                            ("postcode", "Postcode")) if not form.get(key)]
        if not state.cart or missing:
            why = "Your cart is empty." if not state.cart else f"This is a required field: {', '.join(missing)}."
            return page(f"Checkout - {NAME}", nav(state), f"<h1>Checkout</h1><p>{escape(why)}</p>"
                        + address_form("/checkout", "Place Order", name=True), 400)
        number = f"{160 + len(world.orders) + len(state.orders):09d}"
        order = Order(number, ORDER_DATE, tuple(state.cart.items()), "Pending",
                      f"{form['name']}, {form['street']}, {form['city']} {form['postcode']}")
        state.orders.append(order)
        state.cart.clear()
        return redirect(f"/orders/{number}?placed=1")

    def all_orders(state: ShopState) -> list[Order]:
        return list(world.orders) + state.orders

    async def orders(request: Request, state: ShopState) -> Response:
        rows = "".join(f"<tr><td>{o.number}</td><td>{o.date}</td><td>${o.total(world.products):,.2f}</td>"
                       f'<td>{o.status}</td><td><a href="/orders/{o.number}">View Order {o.number}</a></td></tr>'
                       for o in reversed(all_orders(state)))
        body = ("<h1>My Orders</h1><table><thead><tr><th>Order #</th><th>Date</th><th>Order Total</th><th>Status</th>"
                f"<th>Action</th></tr></thead><tbody>{rows}</tbody></table>")
        return page(f"My Orders - {NAME}", nav(state), body)

    async def order(request: Request, state: ShopState) -> Response:
        number = request.path_params["number"]
        known = all_orders(state)
        if number == "latest" and known:
            return redirect(f"/orders/{known[-1].number}")
        found = next((o for o in known if o.number == number), None)
        if found is None:
            return page(f"404 - {NAME}", nav(state), "<h1>Whoops, our bad...</h1><p>No such order.</p>", 404)
        thanks = "<p>Thank you for your purchase!</p>" if request.query_params.get("placed") else ""
        body = (f'{thanks}<div id="order"><h1>Order # {found.number}</h1><p>Status: {found.status}</p>'
                f"<p>Order Date: {found.date}</p><h2>Items Ordered</h2><ul>{order_lines(found, world)}</ul>"
                f"<p>Grand Total: ${found.total(world.products):,.2f}</p>"
                f"<h2>Shipping Address</h2><p>{escape(found.address)}</p></div>")
        return page(f"Order # {found.number} - {NAME}", nav(state), body)

    async def account(request: Request, state: ShopState) -> Response:
        body = (f"<h1>My Account</h1><section><h2>Contact Information</h2><p>{CUSTOMER}</p><p>{CUSTOMER_EMAIL}</p>"
                f'</section><section id="address"><h2>Default Shipping Address</h2>'
                f"<p>{escape(state.address or world.address)}</p></section>"
                '<p><a href="/account/address">Change Shipping Address</a></p>')
        return page(f"My Account - {NAME}", nav(state), body)

    async def change_address(request: Request, state: ShopState) -> Response:
        form_html = address_form("/account/address", "Save Address", name=False)
        if request.method == "GET":
            return page(f"Change Shipping Address - {NAME}", nav(state),
                        f"<h1>Change Shipping Address</h1>{form_html}")
        form = {k: str(v).strip() for k, v in (await request.form()).items()}
        if not all(form.get(k) for k in ("street", "city", "postcode")):
            return page(f"Change Shipping Address - {NAME}", nav(state),
                        f"<h1>Change Shipping Address</h1><p>Please fill in every field.</p>{form_html}", 400)
        state.address = f"{CUSTOMER}, {form['street']}, {form['city']} {form['postcode']}"
        return redirect("/account")

    route = instance_routes(instances, NAME, "shop")
    return Starlette(routes=[
        route("/", home), route("/search", search_page), route("/category/{slug}", category),
        route("/product/{pid:int}", product), route("/cart", cart), route("/cart/add", cart_add, methods=("POST",)),
        route("/cart/remove", cart_remove, methods=("POST",)), route("/checkout", checkout, methods=("GET", "POST")),
        route("/orders", orders), route("/orders/{number}", order), route("/account", account),
        route("/account/address", change_address, methods=("GET", "POST")),
    ])
