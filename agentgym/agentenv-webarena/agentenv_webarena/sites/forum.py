"""The forum: WebArena's Postmill in miniature. Boards (``/f/NAME``) sorted by new or top, posts at Postmill's
addresses (``/f/NAME/ID/slug``, which WebArena's ``reddit_get_post_url`` reads), comments, votes, and forms to
submit a post and to reply; the agent is logged in as one user."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response

from agentenv_webarena.sites.pages import escape, links, page, redirect
from agentenv_webarena.sites.state import ForumState, Instances, instance_routes
from agentenv_webarena.world import FORUM_USER, Comment, Post, World

NAME = "Loopback Forum"
NEW_POST_IDS = 1000  # ids of posts made during a task start here


def forum_app(world: World, instances: Instances) -> Starlette:
    def nav() -> str:
        items = [("/", "Home"), ("/forums", "Forums"), (f"/user/{FORUM_USER}", FORUM_USER)]
        return f'<nav aria-label="Site">{links(items)}</nav>'

    def posts_of(state: ForumState, forum: str) -> list[Post]:
        return world.forum_posts(forum) + [p for p in state.posts.values() if p.forum == forum]

    def find(state: ForumState, pid: int) -> Post | None:
        return world.posts.get(pid) or state.posts.get(pid)

    def score(state: ForumState, post: Post) -> int:
        return post.score + state.votes.get(post.id, 0)

    def comments(state: ForumState, post: Post) -> list[Comment]:
        return list(post.comments) + state.comments.get(post.id, [])

    def row(state: ForumState, p: Post) -> str:
        n = len(comments(state, p))
        return (f'<article class="submission"><h2><a href="{p.path}">{escape(p.title)}</a></h2>'
                f'<p>Submitted by <a href="/user/{p.author}">{p.author}</a> · score {score(state, p)} · '
                f"{n} comment{'s' * (n != 1)}</p></article>")

    async def home(request: Request, state: ForumState) -> Response:
        boards = "".join(f'<li><a href="/f/{f}">f/{f}</a></li>' for f in world.forums)
        return page(NAME, nav(), f"<h1>{NAME}</h1><h2>Forums</h2><ul>{boards}</ul>")

    async def forums(request: Request, state: ForumState) -> Response:
        rows = "".join(f'<li><a href="/f/{f}">f/{f}</a> ({len(posts_of(state, f))} posts)</li>' for f in world.forums)
        return page(f"Forums - {NAME}", nav(), f"<h1>All forums</h1><ul>{rows}</ul>")

    async def board(request: Request, state: ForumState) -> Response:
        forum = request.path_params["forum"]
        if forum not in world.forums:
            return page(f"404 - {NAME}", nav(), "<h1>Page not found</h1><p>No such forum.</p>", 404)
        sort = "top" if request.query_params.get("sort") == "top" else "new"
        found = posts_of(state, forum)
        found.sort(key=(lambda p: -score(state, p)) if sort == "top" else (lambda p: -p.id))
        sorts = links([(f"/f/{forum}?sort=new", "New"), (f"/f/{forum}?sort=top", "Top")])
        body = (f"<h1>f/{forum}</h1><p>Sort by: {sorts}"
                f' · <a href="/f/{forum}/submit">Submit a new post</a></p>'
                + "".join(row(state, p) for p in found))
        return page(f"f/{forum} - {NAME}", nav(), body)

    async def post(request: Request, state: ForumState) -> Response:
        p = find(state, request.path_params["pid"])
        if p is None or p.forum != request.path_params["forum"]:
            return page(f"404 - {NAME}", nav(), "<h1>Page not found</h1><p>No such post.</p>", 404)
        said = comments(state, p)
        listed = "".join(f'<div class="comment"><p><a href="/user/{c.author}">{escape(c.author)}</a> wrote:</p>'
                         f"<p>{escape(c.text)}</p></div>" for c in said)
        vote = state.votes.get(p.id, 0)
        body = (f'<article><h1 class="submission__title">{escape(p.title)}</h1>'
                f'<p>Submitted by <a href="/user/{p.author}">{p.author}</a> in '
                f'<a href="/f/{p.forum}">f/{p.forum}</a></p>'
                f'<div class="submission__body"><p>{escape(p.body)}</p></div>'
                f'<form method="post" action="{p.path}/vote"><p>Score: '
                f'<span class="vote-count">{score(state, p)}</span> '
                f'<button type="submit" name="dir" value="up">{"Retract upvote" if vote == 1 else "Upvote"}</button> '
                f'<button type="submit" name="dir" value="down">{"Retract downvote" if vote == -1 else "Downvote"}'
                "</button></p></form></article>"
                f'<form method="post" action="{p.path}/comment"><p><textarea name="text" aria-label="Comment" rows="2" '
                'cols="60"></textarea></p><p><button type="submit">Post comment</button></p></form>'
                f'<section class="comments"><h2>{len(said)} comment{"s" * (len(said) != 1)}</h2>{listed}</section>')
        return page(f"{p.title} - {NAME}", nav(), body)

    async def vote(request: Request, state: ForumState) -> Response:
        p = find(state, request.path_params["pid"])
        if p is None:
            return page(f"404 - {NAME}", nav(), "<h1>Page not found</h1>", 404)
        way = 1 if (await request.form()).get("dir") == "up" else -1
        state.votes[p.id] = 0 if state.votes.get(p.id, 0) == way else way
        return redirect(p.path)

    async def comment(request: Request, state: ForumState) -> Response:
        p = find(state, request.path_params["pid"])
        if p is None:
            return page(f"404 - {NAME}", nav(), "<h1>Page not found</h1>", 404)
        text = str((await request.form()).get("text", "")).strip()
        if text:
            state.comments.setdefault(p.id, []).append(Comment(FORUM_USER, text))
        return redirect(p.path)

    async def submit(request: Request, state: ForumState) -> Response:
        forum = request.path_params["forum"]
        if forum not in world.forums:
            return page(f"404 - {NAME}", nav(), "<h1>Page not found</h1><p>No such forum.</p>", 404)
        form_html = (f'<form method="post" action="/f/{forum}/submit"><p><label>Title <input type="text" name="title" '
                     'aria-label="Title" size="60"></label></p><p><textarea name="body" aria-label="Body" rows="4" '
                     'cols="60"></textarea></p><p><button type="submit">Create submission</button></p></form>')
        if request.method == "GET":
            return page(f"Submit to f/{forum} - {NAME}", nav(), f"<h1>Create submission in f/{forum}</h1>{form_html}")
        form = {k: str(v).strip() for k, v in (await request.form()).items()}
        if not form.get("title"):
            return page(f"Submit to f/{forum} - {NAME}", nav(), f"<h1>Create submission in f/{forum}</h1>"
                        f"<p>This value should not be blank.</p>{form_html}", 400)
        pid = NEW_POST_IDS + len(state.posts)
        made = Post(pid, forum, form["title"], FORUM_USER, form.get("body", ""), 1, ())
        state.posts[pid] = made
        return redirect(made.path)

    async def user(request: Request, state: ForumState) -> Response:
        name = request.path_params["name"]
        mine = [p for p in list(world.posts.values()) + list(state.posts.values()) if p.author == name]
        return page(f"{name} - {NAME}", nav(), f"<h1>{escape(name)}</h1><h2>Submissions ({len(mine)})</h2>"
                    + "".join(row(state, p) for p in mine))

    route = instance_routes(instances, NAME, "forum")
    return Starlette(routes=[
        route("/", home), route("/forums", forums), route("/f/{forum}", board),
        route("/f/{forum}/submit", submit, methods=("GET", "POST")),
        route("/f/{forum}/{pid:int}/{slug}", post), route("/f/{forum}/{pid:int}", post),
        route("/f/{forum}/{pid:int}/{slug}/vote", vote, methods=("POST",)),
        route("/f/{forum}/{pid:int}/{slug}/comment", comment, methods=("POST",)),
        route("/user/{name}", user),
    ])

